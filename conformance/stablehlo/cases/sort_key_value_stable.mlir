module {
  func.func @main(%k: tensor<12xi32>, %v: tensor<12xf32>) -> (tensor<12xi32>, tensor<12xf32>) {
    %0:2 = "stablehlo.sort"(%k, %v) ({
    ^bb0(%k1: tensor<i32>, %k2: tensor<i32>, %v1: tensor<f32>, %v2: tensor<f32>):
      %c = stablehlo.compare LT, %k1, %k2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }) {dimension = 0 : i64, is_stable = true} : (tensor<12xi32>, tensor<12xf32>) -> (tensor<12xi32>, tensor<12xf32>)
    return %0#0, %0#1 : tensor<12xi32>, tensor<12xf32>
  }
}
