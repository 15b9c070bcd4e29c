module {
  func.func @main(%k: tensor<10xf32>, %v: tensor<10xi32>) -> (tensor<10xf32>, tensor<10xi32>) {
    %0:2 = "stablehlo.sort"(%k, %v) ({
    ^bb0(%k1: tensor<f32>, %k2: tensor<f32>, %v1: tensor<i32>, %v2: tensor<i32>):
      %c = stablehlo.compare LT, %k1, %k2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }) {dimension = 0 : i64, is_stable = false} : (tensor<10xf32>, tensor<10xi32>) -> (tensor<10xf32>, tensor<10xi32>)
    return %0#0, %0#1 : tensor<10xf32>, tensor<10xi32>
  }
}
