module {
  func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
    %0 = stablehlo.multiply %a, %b : tensor<?xf32>
    %1 = stablehlo.add %0, %a : tensor<?xf32>
    return %1 : tensor<?xf32>
  }
}
