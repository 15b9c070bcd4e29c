// Checks outside the entry block, in loop bodies and in called functions.

func.func @pass_cfg() {
  %c = util.unfoldable_constant 3 : i32
  %zero = arith.constant 0 : i32
  %p = arith.cmpi sgt, %c, %zero : i32
  cf.cond_br %p, ^bb1, ^bb2
^bb1:
  %a = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>
  cf.br ^bb3(%a : tensor<2xi32>)
^bb2:
  %b = util.unfoldable_constant dense<[9, 9]> : tensor<2xi32>
  cf.br ^bb3(%b : tensor<2xi32>)
^bb3(%r: tensor<2xi32>):
  check.expect_eq_const(%r, dense<[1, 2]> : tensor<2xi32>) : tensor<2xi32>
  return
}
func.func @fail_cfg() {
  %c = util.unfoldable_constant 3 : i32
  %zero = arith.constant 0 : i32
  %p = arith.cmpi sgt, %c, %zero : i32
  cf.cond_br %p, ^bb1, ^bb2
^bb1:
  %a = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>
  cf.br ^bb3(%a : tensor<2xi32>)
^bb2:
  %b = util.unfoldable_constant dense<[9, 9]> : tensor<2xi32>
  cf.br ^bb3(%b : tensor<2xi32>)
^bb3(%r: tensor<2xi32>):
  check.expect_eq_const(%r, dense<[9, 9]> : tensor<2xi32>) : tensor<2xi32>
  return
}
// Each iteration checks its own value: x doubles, 2^i is expected; iteration 3 of
// the failing twin expects 9 instead of 8.
func.func @pass_scf_for() {
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %st = arith.constant 1 : index
  %one = util.unfoldable_constant dense<1> : tensor<i32>
  %r = scf.for %i = %lb to %ub step %st iter_args(%x = %one) -> tensor<i32> {
    %i32 = arith.index_cast %i : index to i32
    %shift = tensor.from_elements %i32 : tensor<i32>
    %e = stablehlo.shift_left %one, %shift : tensor<i32>
    check.expect_eq(%x, %e) : tensor<i32>
    %y = stablehlo.add %x, %x : tensor<i32>
    scf.yield %y : tensor<i32>
  }
  return
}
func.func @fail_scf_for() {
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %st = arith.constant 1 : index
  %one = util.unfoldable_constant dense<1> : tensor<i32>
  %r = scf.for %i = %lb to %ub step %st iter_args(%x = %one) -> tensor<i32> {
    %i32 = arith.index_cast %i : index to i32
    %shift = tensor.from_elements %i32 : tensor<i32>
    %e0 = stablehlo.shift_left %one, %shift : tensor<i32>
    %three = arith.constant 3 : index
    %last = arith.cmpi eq, %i, %three : index
    %e = scf.if %last -> tensor<i32> {
      %nine = arith.constant dense<9> : tensor<i32>
      scf.yield %nine : tensor<i32>
    } else {
      scf.yield %e0 : tensor<i32>
    }
    check.expect_eq(%x, %e) : tensor<i32>
    %y = stablehlo.add %x, %x : tensor<i32>
    scf.yield %y : tensor<i32>
  }
  return
}
func.func @pass_stablehlo_while() {
  %init = util.unfoldable_constant dense<0> : tensor<i32>
  %limit = stablehlo.constant dense<3> : tensor<i32>
  %r = stablehlo.while(%x = %init) : tensor<i32>
   cond {
    %lt = stablehlo.compare LT, %x, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %y = stablehlo.add %x, %one : tensor<i32>
    %lt = stablehlo.compare LE, %y, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %b = stablehlo.reshape %lt : (tensor<i1>) -> tensor<1xi1>
    check.expect_all_true(%b) : tensor<1xi1>
    stablehlo.return %y : tensor<i32>
  }
  check.expect_eq_const(%r, dense<3> : tensor<i32>) : tensor<i32>
  return
}
func.func @fail_stablehlo_while() {
  %init = util.unfoldable_constant dense<0> : tensor<i32>
  %limit = stablehlo.constant dense<3> : tensor<i32>
  %r = stablehlo.while(%x = %init) : tensor<i32>
   cond {
    %lt = stablehlo.compare LT, %x, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %y = stablehlo.add %x, %one : tensor<i32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %lt = stablehlo.compare LE, %y, %two : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %b = stablehlo.reshape %lt : (tensor<i1>) -> tensor<1xi1>
    check.expect_all_true(%b) : tensor<1xi1>
    stablehlo.return %y : tensor<i32>
  }
  return
}
func.func private @check_square(%x: tensor<2xf32>, %e: tensor<2xf32>) {
  %y = stablehlo.multiply %x, %x : tensor<2xf32>
  check.expect_almost_eq(%y, %e) : tensor<2xf32>
  return
}
func.func @pass_called() {
  %a = util.unfoldable_constant dense<[2.0, 3.0]> : tensor<2xf32>
  %e = util.unfoldable_constant dense<[4.0, 9.0]> : tensor<2xf32>
  func.call @check_square(%a, %e) : (tensor<2xf32>, tensor<2xf32>) -> ()
  %b = util.unfoldable_constant dense<[1.0, 0.5]> : tensor<2xf32>
  %f = util.unfoldable_constant dense<[1.0, 0.25]> : tensor<2xf32>
  func.call @check_square(%b, %f) : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
func.func @fail_called() {
  // The first call passes, the second expects 0.3 for 0.5 * 0.5.
  %a = util.unfoldable_constant dense<[2.0, 3.0]> : tensor<2xf32>
  %e = util.unfoldable_constant dense<[4.0, 9.0]> : tensor<2xf32>
  func.call @check_square(%a, %e) : (tensor<2xf32>, tensor<2xf32>) -> ()
  %b = util.unfoldable_constant dense<[1.0, 0.5]> : tensor<2xf32>
  %f = util.unfoldable_constant dense<[1.0, 0.3]> : tensor<2xf32>
  func.call @check_square(%b, %f) : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
