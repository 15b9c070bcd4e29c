module {
  func.func @main(%a: tensor<6x3xi32>) -> tensor<6x3xi32> {
    %0 = "stablehlo.sort"(%a) ({
    ^bb0(%x: tensor<i32>, %y: tensor<i32>):
      %c = stablehlo.compare GT, %x, %y, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }) {dimension = 0 : i64, is_stable = false} : (tensor<6x3xi32>) -> tensor<6x3xi32>
    return %0 : tensor<6x3xi32>
  }
}
