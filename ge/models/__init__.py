"""Models bundled with `ge`: the demo's CNN as an ONNX file, read with importlib.resources."""
