module {
  func.func @main(%a: tensor<2x3xf32>) -> (tensor<5x6xf32>, tensor<2x3xf32>) {
    %pv = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %a, %pv, low = [1, 0], high = [1, -1], interior = [1, 2] : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x6xf32>
    %1 = stablehlo.reverse %a, dims = [0, 1] : tensor<2x3xf32>
    return %0, %1 : tensor<5x6xf32>, tensor<2x3xf32>
  }
}
