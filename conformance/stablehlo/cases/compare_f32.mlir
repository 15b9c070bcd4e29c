module {
  func.func @main(%a: tensor<12xf32>, %b: tensor<12xf32>) -> (tensor<12xi1>, tensor<12xi1>, tensor<12xi1>, tensor<12xi1>, tensor<12xi1>, tensor<12xi1>) {
    %0 = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %1 = stablehlo.compare NE, %a, %b, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %2 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %3 = stablehlo.compare LE, %a, %b, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %4 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    %5 = stablehlo.compare GE, %a, %b, FLOAT : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xi1>
    return %0, %1, %2, %3, %4, %5 : tensor<12xi1>, tensor<12xi1>, tensor<12xi1>, tensor<12xi1>, tensor<12xi1>, tensor<12xi1>
  }
}
