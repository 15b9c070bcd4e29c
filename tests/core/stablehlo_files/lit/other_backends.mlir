// A RUN line for another backend is a case on that backend's targets only; a RUN line
// that cannot run here is reported with its reason.
// RUN: iree-run-mlir --Xcompiler,iree-input-type=stablehlo --Xcompiler,iree-hal-target-device=vulkan %s --input=2xf32=1,2 | FileCheck %s
// RUN: iree-run-mlir --Xcompiler,iree-input-type=stablehlo --Xcompiler,iree-hal-local-target-device-backends=frobnicator %s --input=2xf32=1,2 | FileCheck %s
// RUN: iree-run-mlir --Xcompiler,iree-hal-local-target-device-backends=llvm-cpu %s --input=2xf32=@values.npy | FileCheck %s
// RUN: iree-opt --canonicalize %s | FileCheck %s
// CHECK: 2xf32=2 4
func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
