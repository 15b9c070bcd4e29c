module {
  func.func @main(%idx: tensor<20xi32>) -> tensor<8xi32> {
    %zeros = stablehlo.constant dense<0> : tensor<8xi32>
    %ones = stablehlo.constant dense<1> : tensor<20xi32>
    %idx2 = stablehlo.reshape %idx : (tensor<20xi32>) -> tensor<20x1xi32>
    %0 = "stablehlo.scatter"(%zeros, %idx2, %ones) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %s = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %s : tensor<i32>
    }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false} : (tensor<8xi32>, tensor<20x1xi32>, tensor<20xi32>) -> tensor<8xi32>
    return %0 : tensor<8xi32>
  }
}
