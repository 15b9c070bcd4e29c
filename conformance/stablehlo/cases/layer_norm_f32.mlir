module {
  func.func @main(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %n = stablehlo.constant dense<1.600000e+01> : tensor<2xf32>
    %eps = stablehlo.constant dense<9.99999974E-6> : tensor<2xf32>
    %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x16xf32>, tensor<f32>) -> tensor<2xf32>
    %mean = stablehlo.divide %sum, %n : tensor<2xf32>
    %mean_b = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<2xf32>) -> tensor<2x16xf32>
    %d = stablehlo.subtract %x, %mean_b : tensor<2x16xf32>
    %sq = stablehlo.multiply %d, %d : tensor<2x16xf32>
    %ssum = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x16xf32>, tensor<f32>) -> tensor<2xf32>
    %var = stablehlo.divide %ssum, %n : tensor<2xf32>
    %ve = stablehlo.add %var, %eps : tensor<2xf32>
    %inv = stablehlo.rsqrt %ve : tensor<2xf32>
    %inv_b = stablehlo.broadcast_in_dim %inv, dims = [0] : (tensor<2xf32>) -> tensor<2x16xf32>
    %0 = stablehlo.multiply %d, %inv_b : tensor<2x16xf32>
    return %0 : tensor<2x16xf32>
  }
}
