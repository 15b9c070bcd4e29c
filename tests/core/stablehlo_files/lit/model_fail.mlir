// The same program, with a wrong expected value on the second row.
// RUN: iree-run-mlir --Xcompiler,iree-input-type=stablehlo --Xcompiler,iree-hal-target-device=local --Xcompiler,iree-hal-local-target-device-backends=llvm-cpu %s --input=2x3xi32=1,2,3,4,5,6 | FileCheck %s
// CHECK-LABEL: EXEC @double
// CHECK: 2x3xi32=[2 4 6][8 10 13]
func.func @double(%arg0: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
