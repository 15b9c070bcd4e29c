module {
  func.func @main(%n: tensor<i64>) -> tensor<i64> {
    %one = stablehlo.constant dense<1> : tensor<i64>
    %0:2 = stablehlo.while(%i = %n, %acc = %one) : tensor<i64>, tensor<i64>
     cond {
      %p = stablehlo.compare GT, %i, %one, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %acc2 = stablehlo.multiply %acc, %i : tensor<i64>
      %i2 = stablehlo.subtract %i, %one : tensor<i64>
      stablehlo.return %i2, %acc2 : tensor<i64>, tensor<i64>
    }
    return %0#1 : tensor<i64>
  }
}
