module {
  func.func @main(%x: tensor<4x5xf32>, %idx: tensor<4x3xi32>) -> tensor<4x3xf32> {
    %rows = stablehlo.iota dim = 0 : tensor<4x3x1xi32>
    %cols = stablehlo.reshape %idx : (tensor<4x3xi32>) -> tensor<4x3x1xi32>
    %coords = stablehlo.concatenate %rows, %cols, dim = 2 : (tensor<4x3x1xi32>, tensor<4x3x1xi32>) -> tensor<4x3x2xi32>
    %0 = "stablehlo.gather"(%x, %coords) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>} : (tensor<4x5xf32>, tensor<4x3x2xi32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
}
