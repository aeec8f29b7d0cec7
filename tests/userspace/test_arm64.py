"""64-bit Raspberry Pi OS (Debian bookworm arm64, under qemu-user): the README's set-up from a
clean copy of the checkout, the commands a user runs first, a model turn against a loopback fake
model, memory with the packaged embedding model, and the same vectors as on x86_64."""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import sys

from tests.fakes.openai_server import OpenAIServer, completion
from tests.helpers import ROOT
from tests.userspace.conftest import PROJECT, SetUp

SENTENCES = ["The Wi-Fi password is taped under the router",
             "Where can I find the wireless network key?",
             "Turn the garden pump on for ten minutes",
             "The greenhouse gets too hot after noon in July",
             "Bonjour, le relais de la porte est en panne"]
EMBED = ("import asyncio, json, pathlib, sys, tempfile\n"
         "from edge.config.model import MemoryConfig\n"
         "from edge.memory.embedders import create_embedder\n"
         "texts = json.loads(sys.stdin.read())\n"
         "print(json.dumps({q: asyncio.run(create_embedder(MemoryConfig(quantize=q == 'requantised'),"
         " pathlib.Path(tempfile.mkdtemp())).embed(texts)) for q in ('as shipped', 'requantised')}))\n")
"""Vectors for the sentences on stdin from the packaged model as shipped and re-quantised (the
default, ``quantize = true``: int8 weights and activations, about 100 MB less RAM)."""


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_make_run_sets_up_the_venv_and_answers_piped_commands(arm64: SetUp) -> None:
    out = arm64.make_run_stdout
    assert "led" in out and "on" in out, out
    assert "GPIO17" in out and "button" in out, out  # /pins lists the default aliases
    machine = arm64.session.run(".venv/bin/python -c 'import platform; print(platform.machine())'",
                                cwd=PROJECT).stdout
    assert machine.strip() == "aarch64"


def test_the_64_bit_venv_has_the_embedding_runtime_and_the_pin_factory(arm64: SetUp) -> None:
    probe = arm64.session.run(".venv/bin/python -c 'import numpy, onnxruntime, lgpio;"
                              " print(numpy.__version__, onnxruntime.__version__)'", cwd=PROJECT)
    assert probe.stdout.strip()


def test_config_check_and_status(arm64: SetUp) -> None:
    code, out, err = arm64.cli("config check")
    assert code == 0 and "OK" in out + err, out + err
    code, out, err = arm64.cli("status", check=False)
    assert code == 3, out + err  # no agent running: the status is still printed
    assert "not running" in out + err, out + err


def test_a_one_shot_turn_against_a_loopback_model(arm64: SetUp) -> None:
    """The chroot shares the host's network namespace: the fake model on 127.0.0.1 is reachable."""
    with OpenAIServer([(200, completion("Hello from the fake model"))]) as model:
        env = {"EDGE_PROVIDER__BASE_URL": model.base_url, "EDGE_PROVIDER__MODEL": "test-model",
               "EDGE_PROVIDER__API_KEY": "sk-test"}
        code, out, err = arm64.cli("run", env=env, input="hello there\n")
    assert code == 0, out + err
    assert "Hello from the fake model" in out, out + err
    assert len(model.requests) == 1
    assert model.requests[0]["messages"][-1]["content"].endswith("hello there")


def test_memory_finds_a_paraphrase_with_the_embedding_model(arm64: SetUp) -> None:
    arm64.cli('memory store wifi "The Wi-Fi password is taped under the router" --category core')
    _, out, err = arm64.cli('memory search "Where can I find the wireless network key?" --json')
    found = json.loads(out)["data"]["entries"]
    assert found and found[0]["key"] == "wifi", out + err
    _, out, _ = arm64.cli("memory stats --json")
    assert json.loads(out)["data"]["embedder"] != "none", out


def test_the_embedding_model_gives_the_same_vectors_as_on_x86_64(arm64: SetUp) -> None:
    """As shipped and as re-quantised by default (unsigned int8 weights and activations, whose
    products both architectures' kernels compute exactly: edge/memory/quantize.py), the model
    gives the same vectors on both: cosine 1.000000 measured, held to 0.999, and the same
    ranking."""
    sentences = json.dumps(SENTENCES)
    host = subprocess.run([sys.executable, "-c", EMBED], input=sentences, capture_output=True,
                          text=True, cwd=ROOT, timeout=600, check=True)
    pi = arm64.session.run(f".venv/bin/python -c {shlex.quote(EMBED)}", cwd=PROJECT,
                           input=sentences)
    x86, arm = json.loads(host.stdout), json.loads(pi.stdout)
    for kind in ("as shipped", "requantised"):
        assert len(x86[kind]) == len(arm[kind]) == len(SENTENCES)
        similarities = [cosine(a, b) for a, b in zip(x86[kind], arm[kind], strict=True)]
        assert min(similarities) >= 0.999, (kind, similarities)

        def ranking(vectors: list[list[float]]) -> list[int]:
            query = vectors[1]  # the paraphrase of the first sentence
            return sorted(range(len(vectors)), key=lambda i: -cosine(query, vectors[i]))

        assert ranking(x86[kind]) == ranking(arm[kind]), kind
