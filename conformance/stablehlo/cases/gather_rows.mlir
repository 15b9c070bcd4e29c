module {
  func.func @main(%table: tensor<10x4xf32>, %idx: tensor<6xi32>) -> tensor<6x4xf32> {
    %0 = "stablehlo.gather"(%table, %idx) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>} : (tensor<10x4xf32>, tensor<6xi32>) -> tensor<6x4xf32>
    return %0 : tensor<6x4xf32>
  }
}
