// Every check op kind of IREE's check dialect, once passing (pass_*) and once with a
// wrong expected value (fail_*). util.unfoldable_constant keeps values from folding.

func.func @pass_true() {
  %c = util.unfoldable_constant 1 : i32
  check.expect_true(%c) : i32
  return
}
func.func @fail_true() {
  %c = util.unfoldable_constant 0 : i32
  check.expect_true(%c) : i32
  return
}
func.func @pass_false() {
  %c = util.unfoldable_constant 0 : i32
  check.expect_false(%c) : i32
  return
}
func.func @fail_false() {
  %c = util.unfoldable_constant 7 : i32
  check.expect_false(%c) : i32
  return
}
func.func @pass_all_true() {
  %c = util.unfoldable_constant dense<[true, true, true]> : tensor<3xi1>
  check.expect_all_true(%c) : tensor<3xi1>
  return
}
func.func @fail_all_true() {
  %c = util.unfoldable_constant dense<[true, false, true]> : tensor<3xi1>
  check.expect_all_true(%c) : tensor<3xi1>
  return
}
func.func @pass_eq() {
  %a = util.unfoldable_constant dense<[1, 2, 3]> : tensor<3xi32>
  %b = stablehlo.add %a, %a : tensor<3xi32>
  %e = util.unfoldable_constant dense<[2, 4, 6]> : tensor<3xi32>
  check.expect_eq(%b, %e) : tensor<3xi32>
  return
}
func.func @fail_eq() {
  %a = util.unfoldable_constant dense<[1, 2, 3]> : tensor<3xi32>
  %b = stablehlo.add %a, %a : tensor<3xi32>
  %e = util.unfoldable_constant dense<[2, 4, 7]> : tensor<3xi32>
  check.expect_eq(%b, %e) : tensor<3xi32>
  return
}
func.func @pass_eq_const() {
  %a = util.unfoldable_constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = stablehlo.multiply %a, %a : tensor<2xf32>
  check.expect_eq_const(%b, dense<[2.25, 4.0]> : tensor<2xf32>) : tensor<2xf32>
  return
}
func.func @fail_eq_const() {
  %a = util.unfoldable_constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = stablehlo.multiply %a, %a : tensor<2xf32>
  check.expect_eq_const(%b, dense<[2.25, 4.001]> : tensor<2xf32>) : tensor<2xf32>
  return
}
func.func @pass_almost_eq() {
  %a = util.unfoldable_constant dense<[1.0, 100.0]> : tensor<2xf32>
  %e = util.unfoldable_constant dense<[1.005, 100.5]> : tensor<2xf32>
  check.expect_almost_eq(%a, %e, atol 1.0e-02, rtol 1.0e-02) : tensor<2xf32>
  return
}
func.func @fail_almost_eq() {
  // 100 vs 100.5 is outside atol 1e-2 + rtol 1e-3 * 100.5.
  %a = util.unfoldable_constant dense<[1.0, 100.0]> : tensor<2xf32>
  %e = util.unfoldable_constant dense<[1.005, 100.5]> : tensor<2xf32>
  check.expect_almost_eq(%a, %e, atol 1.0e-02, rtol 1.0e-03) : tensor<2xf32>
  return
}
func.func @pass_almost_eq_const() {
  %a = util.unfoldable_constant dense<[0.5]> : tensor<1xf32>
  check.expect_almost_eq_const(%a, dense<[0.50005]> : tensor<1xf32>) : tensor<1xf32>
  return
}
func.func @fail_almost_eq_const() {
  // The default atol is 1e-4.
  %a = util.unfoldable_constant dense<[0.5]> : tensor<1xf32>
  check.expect_almost_eq_const(%a, dense<[0.5002]> : tensor<1xf32>) : tensor<1xf32>
  return
}
func.func @pass_almost_eq_const_atol() {
  %a = util.unfoldable_constant dense<[0.5]> : tensor<1xf32>
  check.expect_almost_eq_const(%a, dense<[0.6]> : tensor<1xf32>, atol 2.0e-01) : tensor<1xf32>
  return
}
func.func @fail_almost_eq_const_atol() {
  %a = util.unfoldable_constant dense<[0.5]> : tensor<1xf32>
  check.expect_almost_eq_const(%a, dense<[0.8]> : tensor<1xf32>, atol 2.0e-01) : tensor<1xf32>
  return
}
