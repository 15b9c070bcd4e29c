"""IREE as an ONNX backend: ``onnx.backend.base.Backend`` over this project's pipeline
(``backend``), onnx's own test runner with the expectations manifests (``runner``,
``backend_tests``, ``python -m iree_conformance.onnx_backend``) and the onnx backend
scoreboard's result files (``scoreboard``). See docs/onnx-backend.md."""
