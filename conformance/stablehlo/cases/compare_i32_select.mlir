module {
  func.func @main(%a: tensor<3x4xi32>, %b: tensor<3x4xi32>) -> tensor<3x4xi32> {
    %p = stablehlo.compare GT, %a, %b, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
    %0 = stablehlo.select %p, %a, %b : tensor<3x4xi1>, tensor<3x4xi32>
    return %0 : tensor<3x4xi32>
  }
}
