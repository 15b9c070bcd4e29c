module {
  func.func @main(%n: tensor<i32>) -> tensor<i32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %0:2 = stablehlo.while(%i = %one, %acc = %zero) : tensor<i32>, tensor<i32>
     cond {
      %p = stablehlo.compare LE, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %acc2 = stablehlo.add %acc, %i : tensor<i32>
      %i2 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i2, %acc2 : tensor<i32>, tensor<i32>
    }
    return %0#1 : tensor<i32>
  }
}
