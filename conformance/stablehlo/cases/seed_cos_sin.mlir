module {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xi64>) -> tensor<4xf32> {
      %0 = stablehlo.cosine %arg0 : tensor<4xf32>
      %1 = stablehlo.convert %arg1 : (tensor<4xi64>) -> tensor<4xf32>
      %2 = stablehlo.sine %1 : tensor<4xf32>
      %3 = stablehlo.add %0, %2 : tensor<4xf32>
      return %3 : tensor<4xf32>
  }
}
