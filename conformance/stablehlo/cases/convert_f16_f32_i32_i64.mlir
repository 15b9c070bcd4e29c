module {
  func.func @main(%a: tensor<8xf16>, %b: tensor<4xi32>) -> (tensor<8xf32>, tensor<4xi64>) {
    %0 = stablehlo.convert %a : (tensor<8xf16>) -> tensor<8xf32>
    %1 = stablehlo.convert %b : (tensor<4xi32>) -> tensor<4xi64>
    return %0, %1 : tensor<8xf32>, tensor<4xi64>
  }
}
