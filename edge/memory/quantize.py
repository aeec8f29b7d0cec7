"""``python -m edge.memory.quantize SOURCE TARGET NAME``: optimise a model graph with onnxruntime
(folding the int8-dequantise nodes into float32 weights), then quantise its weights per channel
with ``quantize_dynamic`` (shared/notes/embeddings.md: cosine to float32 about 0.99, a third of
the memory). Run in a child process by ``model_file.quantized_copy``.

The weights are unsigned (``QUInt8``), like the activations: onnxruntime's x86-64 kernel for
unsigned-by-signed products adds pairs in 16 bits with saturation (``vpmaddubsw`` without VNNI),
while arm64's dot-product kernels never saturate, so with signed weights a sentence could get a
different vector on a Pi than on a PC (cosine 0.9972 measured). Unsigned-by-unsigned products are
exact on both: the same vectors (cosine 0.9999999), for about 1 ms more per sentence on x86-64.

The graph is written to TARGET; the word-embedding table (30,522 x 384 int8, half the weights) to
``TARGET.data``, referred to from the graph as ``NAME.data`` (the name TARGET will be renamed
to). onnxruntime maps such a page-aligned external table from the file instead of copying it into
the heap, and a lookup reads only the rows of the words in the text: 11 MB less resident memory.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

PAGE = 4096
LOOKUP_TABLE_MIN_BYTES = 1 << 20
"""Initializers this large that only Gather nodes read (the word embeddings) go to the data file."""


def quantize(source: Path, target: Path, name: str) -> None:
    from edge.memory.onnx_embedder import import_onnxruntime

    ort = import_onnxruntime()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        optimized = Path(scratch) / "optimized.onnx"
        quantized = Path(scratch) / "quantized.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(optimized)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        quantize_dynamic(optimized, quantized, per_channel=True, weight_type=QuantType.QUInt8)
        move_lookup_tables(quantized, target, f"{name}.data")


def move_lookup_tables(model_path: Path, target: Path, location: str) -> None:
    """Write ``model_path`` to ``target`` with its lookup tables, page-aligned, in
    ``target.data`` (``location`` is the data file's name as the graph refers to it)."""
    import onnx
    from onnx.external_data_helper import set_external_data

    model = onnx.load(str(model_path))
    readers: dict[str, set[str]] = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, set()).add(node.op_type)
    with open(f"{target}.data", "wb") as data:
        for tensor in model.graph.initializer:
            if len(tensor.raw_data) < LOOKUP_TABLE_MIN_BYTES or readers.get(tensor.name) != {"Gather"}:
                continue
            data.write(b"\0" * (-data.tell() % PAGE))
            offset = data.tell()
            data.write(tensor.raw_data)
            set_external_data(tensor, location, offset, len(tensor.raw_data))
            tensor.ClearField("raw_data")
            tensor.data_location = onnx.TensorProto.EXTERNAL
    onnx.save_model(model, str(target))


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m edge.memory.quantize SOURCE TARGET NAME", file=sys.stderr)
        return 2
    logging.getLogger().setLevel(logging.ERROR)  # quantize_dynamic's pre-processing advice
    quantize(Path(argv[0]), Path(argv[1]), argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
