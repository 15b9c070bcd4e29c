module {
  func.func @main(%v: tensor<5x8xf32>) -> (tensor<5xf32>, tensor<5xi32>) {
    %idx = stablehlo.iota dim = 1 : tensor<5x8xi32>
    %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %minus_one = stablehlo.constant dense<-1> : tensor<i32>
    %0:2 = stablehlo.reduce(%v init: %neg_inf), (%idx init: %minus_one) across dimensions = [1] : (tensor<5x8xf32>, tensor<5x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<5xf32>, tensor<5xi32>)
     reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {
      %gt = stablehlo.compare GT, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %eq = stablehlo.compare EQ, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %lower = stablehlo.compare LT, %b, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %tie = stablehlo.and %eq, %lower : tensor<i1>
      %take_lhs = stablehlo.or %gt, %tie : tensor<i1>
      %val = stablehlo.select %take_lhs, %a, %c : tensor<i1>, tensor<f32>
      %ind = stablehlo.select %take_lhs, %b, %d : tensor<i1>, tensor<i32>
      stablehlo.return %val, %ind : tensor<f32>, tensor<i32>
    }
    return %0#0, %0#1 : tensor<5xf32>, tensor<5xi32>
  }
}
