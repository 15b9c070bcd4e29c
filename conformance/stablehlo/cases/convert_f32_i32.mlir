module {
  func.func @main(%a: tensor<10xf32>, %b: tensor<6xi32>) -> (tensor<10xi32>, tensor<6xf32>) {
    %0 = stablehlo.convert %a : (tensor<10xf32>) -> tensor<10xi32>
    %1 = stablehlo.convert %b : (tensor<6xi32>) -> tensor<6xf32>
    return %0, %1 : tensor<10xi32>, tensor<6xf32>
  }
}
