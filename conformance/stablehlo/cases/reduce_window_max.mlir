module {
  func.func @main(%a: tensor<1x4x6x1xf32>) -> tensor<1x2x3x1xf32> {
    %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = "stablehlo.reduce_window"(%a, %neg_inf) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %m = stablehlo.maximum %x, %y : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<1x4x6x1xf32>, tensor<f32>) -> tensor<1x2x3x1xf32>
    return %0 : tensor<1x2x3x1xf32>
  }
}
