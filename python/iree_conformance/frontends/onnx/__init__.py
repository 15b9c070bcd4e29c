"""ONNX data layer: operator tests, model preparation, inputs, references, Model Zoo.

The modules here are pure library pieces: they find, fetch, prepare and describe ONNX
cases; the worker and the pytest plugin decide how to run them. This package is named
``onnx`` inside ``iree_conformance``; modules here import the real ``onnx`` package with
absolute imports, so the two never clash.
"""
