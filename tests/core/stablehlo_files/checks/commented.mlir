// IREE check tests carry a RUN line without FileCheck; the functions are the cases.
// RUN: iree-run-mlir --Xcompiler,iree-hal-target-backends=llvm-cpu %s
// A test kept commented out is no case:
// func.func @i8() {
//   %c = stablehlo.constant dense<[1, 2]> : tensor<2xi8>
//   check.expect_eq_const(%c, dense<[1, 2]> : tensor<2xi8>) : tensor<2xi8>
//   return
// }
func.func @pass_i32() {
  %c = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const(%c, dense<[1, 2]> : tensor<2xi32>) : tensor<2xi32>
  return
}
