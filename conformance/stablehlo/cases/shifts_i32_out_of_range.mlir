module {
  func.func @main(%a: tensor<12xi32>, %b: tensor<12xi32>) -> (tensor<12xi32>, tensor<12xi32>, tensor<12xi32>) {
    %0 = stablehlo.shift_left %a, %b : tensor<12xi32>
    %1 = stablehlo.shift_right_arithmetic %a, %b : tensor<12xi32>
    %2 = stablehlo.shift_right_logical %a, %b : tensor<12xi32>
    return %0, %1, %2 : tensor<12xi32>, tensor<12xi32>, tensor<12xi32>
  }
}
