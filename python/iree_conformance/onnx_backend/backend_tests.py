"""onnx's backend tests against IREE, as a pytest file:

    pytest python/iree_conformance/onnx_backend/backend_tests.py -k 'not _cuda'

(or ``python -m iree_conformance.onnx_backend``). The environment picks the target, a
sample and the manifests (``runner.backend_test_from_environment``).
"""

from __future__ import annotations

from iree_conformance.onnx_backend.runner import backend_tests_from_environment

globals().update(backend_tests_from_environment(__name__))
