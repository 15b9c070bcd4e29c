func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  %1 = math.tanh %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
