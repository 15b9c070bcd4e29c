module {
  func.func @main(%operand: tensor<6x3xf32>, %idx: tensor<5x1xi32>, %upd: tensor<5x3xf32>) -> tensor<6x3xf32> {
    %0 = "stablehlo.scatter"(%operand, %idx, %upd) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false} : (tensor<6x3xf32>, tensor<5x1xi32>, tensor<5x3xf32>) -> tensor<6x3xf32>
    return %0 : tensor<6x3xf32>
  }
}
