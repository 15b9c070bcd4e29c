func.func @pass_mixed() {
  %c = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const(%c, dense<[1, 2]> : tensor<2xi32>) : tensor<2xi32>
  return
}
