#!/bin/sh
# Needs a Vulkan device (Debian: apt-get install mesa-vulkan-drivers libvulkan1) and
# iree-base-compiler / iree-base-runtime (checked with 3.13.0).
set -x
iree-compile program.mlir --iree-hal-target-device=vulkan --iree-vulkan-target=llvmpipe -o program.vmfb
iree-run-module --device=vulkan --module=program.vmfb --input=4xf32=0,0.5,1,2 --input=4xf32=0,0,0,0
python repro.py program.vmfb
