module {
  func.func @main(%a: tensor<256x4xf32>) -> tensor<4xf32> {
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%a init: %zero) across dimensions = [0] : (tensor<256x4xf32>, tensor<f32>) -> tensor<4xf32>
     reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
    return %0 : tensor<4xf32>
  }
}
