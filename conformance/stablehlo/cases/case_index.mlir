module {
  func.func @main(%index: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.case"(%index) ({
      %r = stablehlo.add %x, %x : tensor<4xf32>
      stablehlo.return %r : tensor<4xf32>
    }, {
      %r = stablehlo.multiply %x, %x : tensor<4xf32>
      stablehlo.return %r : tensor<4xf32>
    }, {
      %r = stablehlo.negate %x : tensor<4xf32>
      stablehlo.return %r : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
