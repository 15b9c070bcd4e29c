module {
  func.func @main(%a: tensor<4x5xi32>) -> (tensor<i32>, tensor<4xi32>) {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x5xi32>, tensor<i32>) -> tensor<i32>
    %1 = stablehlo.reduce(%a init: %one) applies stablehlo.multiply across dimensions = [1] : (tensor<4x5xi32>, tensor<i32>) -> tensor<4xi32>
    return %0, %1 : tensor<i32>, tensor<4xi32>
  }
}
