// RUN: iree-run-mlir --Xcompiler,iree-input-type=stablehlo --Xcompiler,iree-hal-target-device=local --Xcompiler,iree-hal-local-target-device-backends=llvm-cpu %s --input="1x5xf32=[0,1,0,3,4]" --input=2x3xi32=1,2,3,4,5,6 | FileCheck %s
// RUN: iree-compile %s --iree-input-type=stablehlo --iree-hal-target-backends=llvm-cpu | \
// RUN:   iree-run-module --device=local-task --module=- --function=main --input="1x5xf32=0 1 0 3 4" --input=2x3xi32 | FileCheck %s --check-prefix=ZEROS
// CHECK-LABEL: EXEC @main
// CHECK: 1x5xf32=[0 1 0 3 4]
// CHECK-NEXT: result[1]: hal.buffer_view
// CHECK-NEXT: 2x3xi32=[2 4 6][8 10 12]
// CHECK: 2xf32=1.41{{[0-9]+}} 2.71828
// ZEROS: 2x3xi32=[0 0 0][0 0 0]
func.func @main(%arg0: tensor<1x5xf32>, %arg1: tensor<2x3xi32>) -> (tensor<1x5xf32>, tensor<2x3xi32>, tensor<2xf32>) {
  %0 = stablehlo.add %arg1, %arg1 : tensor<2x3xi32>
  %c = stablehlo.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %s = stablehlo.sqrt %c : tensor<2xf32>
  %one = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %e = stablehlo.exponential %one : tensor<2xf32>
  %m = stablehlo.multiply %s, %e : tensor<2xf32>
  return %arg0, %0, %m : tensor<1x5xf32>, tensor<2x3xi32>, tensor<2xf32>
}
