module {
  func.func @main(%x: tensor<5xf32>, %n: tensor<i32>) -> tensor<5xf32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %ones = stablehlo.constant dense<1.000000e+00> : tensor<5xf32>
    %0:2 = stablehlo.while(%i = %zero, %acc = %ones) : tensor<i32>, tensor<5xf32>
     cond {
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %acc2 = stablehlo.multiply %acc, %x : tensor<5xf32>
      %i2 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i2, %acc2 : tensor<i32>, tensor<5xf32>
    }
    return %0#1 : tensor<5xf32>
  }
}
