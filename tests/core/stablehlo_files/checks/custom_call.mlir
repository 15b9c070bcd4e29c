// openxla/stablehlo's form: stablehlo.custom_call @check.expect_*.

func.func public @pass_custom_call() {
  %a = util.unfoldable_constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = stablehlo.add %a, %a : tensor<3xf32>
  %e = stablehlo.constant dense<[2.0, 4.0, 6.0]> : tensor<3xf32>
  stablehlo.custom_call @check.expect_close(%b, %e) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
  stablehlo.custom_call @check.expect_eq(%b, %e) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
  %n = stablehlo.constant dense<[2.001, 4.0, 6.0]> : tensor<3xf32>
  stablehlo.custom_call @check.expect_almost_eq(%b, %n) {has_side_effect = true, tolerance = 1.0e-2 : f64} : (tensor<3xf32>, tensor<3xf32>) -> ()
  %u = stablehlo.constant dense<[1, 200]> : tensor<2xui8>
  %v = stablehlo.constant dense<[1, 200]> : tensor<2xui8>
  stablehlo.custom_call @check.expect_eq(%u, %v) {has_side_effect = true} : (tensor<2xui8>, tensor<2xui8>) -> ()
  return
}
func.func public @fail_custom_call_close() {
  // 6.0 against 6.001 is far more than 3 ULPs apart.
  %a = util.unfoldable_constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = stablehlo.add %a, %a : tensor<3xf32>
  %e = stablehlo.constant dense<[2.0, 4.0, 6.001]> : tensor<3xf32>
  stablehlo.custom_call @check.expect_close(%b, %e) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
  return
}
func.func public @fail_custom_call_eq() {
  %u = stablehlo.constant dense<[1, 200]> : tensor<2xui8>
  %v = stablehlo.constant dense<[1, 201]> : tensor<2xui8>
  stablehlo.custom_call @check.expect_eq(%u, %v) {has_side_effect = true} : (tensor<2xui8>, tensor<2xui8>) -> ()
  return
}
func.func public @fail_custom_call_almost_eq() {
  %a = util.unfoldable_constant dense<[1.0]> : tensor<1xf32>
  %e = stablehlo.constant dense<[1.1]> : tensor<1xf32>
  stablehlo.custom_call @check.expect_almost_eq(%a, %e) {has_side_effect = true, tolerance = 1.0e-2 : f64} : (tensor<1xf32>, tensor<1xf32>) -> ()
  return
}
