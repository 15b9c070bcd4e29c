module {
  func.func @main(%x: tensor<6xf32>) -> tensor<6xf32> {
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
    %p = stablehlo.compare GT, %sum, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %0 = "stablehlo.if"(%p) ({
      %r = stablehlo.exponential %x : tensor<6xf32>
      stablehlo.return %r : tensor<6xf32>
    }, {
      %r = stablehlo.abs %x : tensor<6xf32>
      stablehlo.return %r : tensor<6xf32>
    }) : (tensor<i1>) -> tensor<6xf32>
    return %0 : tensor<6xf32>
  }
}
