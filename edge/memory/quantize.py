"""``python -m edge.memory.quantize SOURCE TARGET``: optimise a model graph with onnxruntime
(folding the int8-dequantise nodes into float32 weights), then quantise its weights per channel
with ``quantize_dynamic`` (shared/notes/embeddings.md: cosine to float32 about 0.99, a third of
the memory). Run in a child process by ``model_file.quantized_copy``.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path


def quantize(source: Path, target: Path) -> None:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        optimized = Path(scratch) / "optimized.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(optimized)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        quantize_dynamic(optimized, target, per_channel=True, weight_type=QuantType.QInt8)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m edge.memory.quantize SOURCE TARGET", file=sys.stderr)
        return 2
    logging.getLogger().setLevel(logging.ERROR)  # quantize_dynamic's pre-processing advice
    quantize(Path(argv[0]), Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
