module {
  func.func @main(%a: tensor<32xf32>, %b: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
    %0 = stablehlo.exponential %a : tensor<32xf32>
    %1 = stablehlo.log %b : tensor<32xf32>
    return %0, %1 : tensor<32xf32>, tensor<32xf32>
  }
}
