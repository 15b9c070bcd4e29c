module {
  func.func @main(%a: tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>) {
    %0 = stablehlo.floor %a : tensor<10xf32>
    %1 = stablehlo.ceil %a : tensor<10xf32>
    return %0, %1 : tensor<10xf32>, tensor<10xf32>
  }
}
