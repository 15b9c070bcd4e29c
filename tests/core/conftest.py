from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS_TOML = ROOT / "conformance" / "targets.toml"
ADD_MLIR = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
