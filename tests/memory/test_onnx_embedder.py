"""The onnx embedder: same vectors as the reference pipeline, sensible similarities, the model
verified before loading, and nothing heavy imported until it is used."""

import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest

from edge.config.model import MemoryConfig
from edge.memory.base import EmbeddingError
from edge.memory.embedders import create_embedder
from edge.memory.model_file import data_file, packaged_model, resolve_model

SENTENCES = ["The weather is lovely today", "It's so sunny outside!", "He drove to the stadium",
             "Switch the greenhouse pump off at night"]


def reference_vectors(tok, texts):
    """Reference tokenizer + the model as shipped, pooled and normalised the textbook way."""
    tok.enable_padding()
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    session = ort.InferenceSession(str(packaged_model()), providers=["CPUExecutionProvider"])
    hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                "token_type_ids": np.zeros_like(ids)})[0]
    pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


async def test_unquantised_vectors_equal_the_reference(tmp_path, reference_tokenizer):
    onnx = create_embedder(MemoryConfig(quantize=False), tmp_path)
    ours = np.array(await onnx.embed(SENTENCES))
    assert ours.shape == (4, 384)
    assert np.abs(ours - reference_vectors(reference_tokenizer, SENTENCES)).max() < 1e-4
    assert onnx.model_id == "all-MiniLM-L6-v2-int8@8199be6f699a"


async def test_requantised_model_stays_close_and_gets_its_own_id(embedder, model_state_dir,
                                                                 reference_tokenizer):
    ours = np.array(await embedder.embed(SENTENCES))
    cosines = (ours * reference_vectors(reference_tokenizer, SENTENCES)).sum(1)
    assert cosines.min() > 0.98
    assert embedder.model_id.endswith("+q8u8")
    (cached,) = (model_state_dir / "models").glob("*.q8u8.onnx")
    # the word-embedding table (30,522 x 384 int8) sits in the data file, mapped rather than copied
    assert data_file(cached).stat().st_size >= 30_522 * 384 > cached.stat().st_size


def test_a_copy_an_older_version_made_is_removed_once_the_new_one_exists(embedder,
                                                                          model_state_dir):
    from edge.memory.model_file import packaged_model, quantized_copy, sha256_of

    models = model_state_dir / "models"
    old = models / "0123456789abcdef.q8dyn.onnx"
    old.write_bytes(b"old graph")
    data_file(old).write_bytes(b"old table")
    source = packaged_model()
    kept = quantized_copy(source, sha256_of(source), models)
    assert kept.name.endswith(".q8u8.onnx") and kept.is_file()
    assert not old.exists() and not data_file(old).exists()


async def test_similar_sentences_score_higher_than_unrelated(embedder):
    weather, sunny, stadium, _ = np.array(await embedder.embed(SENTENCES))
    assert 0.55 < weather @ sunny < 0.75
    assert weather @ stadium < 0.2
    assert np.allclose(np.linalg.norm([weather, sunny, stadium], axis=1), 1.0, atol=1e-5)


async def test_one_and_batch_agree(embedder):
    one = np.array(await embedder.embed_one(SENTENCES[1]))
    batch = np.array(await embedder.embed(SENTENCES))[1]
    assert one @ batch > 0.9999


def test_a_model_file_with_another_digest_is_refused(tmp_path):
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(EmbeddingError, match="sha256"):
        resolve_model(str(fake), "0" * 64, quantize=False, cache_dir=tmp_path)


async def test_a_local_model_path_is_used_with_its_own_id(tmp_path):
    local = tmp_path / "minilm.onnx"
    local.write_bytes(packaged_model().read_bytes())
    onnx = create_embedder(MemoryConfig(model_path=str(local), quantize=False), tmp_path)
    assert onnx.model_id.startswith("minilm@8199be6f699a")
    assert len(await onnx.embed_one("hello")) == 384


def test_importing_memory_loads_no_numpy_or_onnxruntime():
    code = ("import sys, edge.memory, edge.memory.sqlite, edge.tools.memory, edge.cli.memory_cmd;"
            "from edge.memory.embedders import create_embedder;"
            "from edge.config.model import MemoryConfig; from pathlib import Path;"
            "create_embedder(MemoryConfig(), Path('/nonexistent'));"
            "print(sorted(m for m in ('numpy', 'onnxruntime', 'httpx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_model_runs_without_onnxruntime_telemetry(model_state_dir, tmp_path):
    """onnxruntime 1.29+ on Linux keeps a device id and an SQLite event cache under
    ~/.cache/Microsoft and starts an uploader, unless told not to before it loads."""
    code = ("import os, sys; from pathlib import Path;"
            "from edge.config.model import MemoryConfig;"
            "from edge.memory.embedders import create_embedder;"
            "embedder = create_embedder(MemoryConfig(), Path(sys.argv[1]));"
            "embedder.embed_sync(['the pump runs at night']);"
            "print(sorted(os.readlink(f'/proc/self/fd/{fd}') for fd in os.listdir('/proc/self/fd')"
            " if os.path.exists(f'/proc/self/fd/{fd}')))")
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    out = subprocess.run([sys.executable, "-c", code, str(model_state_dir)], capture_output=True,
                         text=True, check=True, env={**env, "HOME": str(tmp_path)})
    assert "onnxruntime.db" not in out.stdout
    assert not (tmp_path / ".cache" / "Microsoft").exists()
