module {
  func.func @main(%lo: tensor<8xf32>, %x: tensor<8xf32>, %hi: tensor<8xf32>, %y: tensor<6xi32>) -> (tensor<8xf32>, tensor<6xi32>) {
    %0 = stablehlo.clamp %lo, %x, %hi : tensor<8xf32>
    %min = stablehlo.constant dense<-5> : tensor<i32>
    %max = stablehlo.constant dense<10> : tensor<i32>
    %1 = stablehlo.clamp %min, %y, %max : (tensor<i32>, tensor<6xi32>, tensor<i32>) -> tensor<6xi32>
    return %0, %1 : tensor<8xf32>, tensor<6xi32>
  }
}
