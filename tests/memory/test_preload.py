"""When the agent loads the embedding model in the background at start: whenever it keeps
running. A daemon does, whether its input is a terminal held open or nothing (systemd), and so
does a piped run beside a network channel (it keeps running after the input ends); only a one-shot
piped run, the terminal its only channel, skips it."""

from __future__ import annotations

import asyncio
import io
import os
import pty
from contextlib import contextmanager

import pytest

from edge.config.loader import load_config
from edge.runtime import Runtime
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import until


@contextmanager
def held_open(read_end: int, other_end: int):
    """``read_end`` as stdin while ``other_end`` stays open; closing it at the end ends the
    input, and the channel's reader thread stops reading."""
    with open(read_end) as stream:
        try:
            yield stream
        finally:
            os.close(other_end)


def terminal():
    """A pty's terminal end as stdin, its other end held open as a terminal emulator would
    (closing it hangs the terminal up)."""
    master, slave = pty.openpty()
    return held_open(slave, master)


def pipe():
    """A pipe as stdin, its writer held open (a script still sending)."""
    reader, writer = os.pipe()
    return held_open(reader, writer)


@contextmanager
def nothing():
    with open(os.devnull) as stream:
        yield stream


def onnx_loaded(env, model_state_dir):
    """Embedding memory on defaults, sharing the model this test session re-quantised once."""
    loaded = load_config(env=dict(env, EDGE_MEMORY__EMBEDDER="onnx"))
    loaded.prepare_dirs()
    (loaded.state_dir / "models").symlink_to(model_state_dir / "models")
    return loaded


@pytest.fixture
def onnx_config(isolated_env, embedder, model_state_dir):
    return onnx_loaded(isolated_env, model_state_dir)


async def start(loaded, stdin, mock_factory) -> tuple[Runtime, asyncio.Task]:
    runtime = Runtime(loaded, resident=True, pin_factory=mock_factory, stdin=stdin,
                      stdout=io.StringIO())
    task = asyncio.create_task(runtime.run())
    await until(lambda: loaded.control_socket.exists() or task.done(), timeout=20)
    assert not task.done(), task.exception()
    return runtime, task


@pytest.mark.parametrize("stdin", [terminal, nothing], ids=["terminal", "systemd"])
async def test_a_daemon_preloads_the_model(onnx_config, mock_factory, stdin):
    with stdin() as stream:
        runtime, task = await start(onnx_config, stream, mock_factory)
        try:
            assert runtime.memory is not None
            await until(lambda: runtime.memory.model_ready, timeout=60)
        finally:
            runtime.request_stop("test")
            await asyncio.wait_for(task, 60)


async def test_a_piped_one_shot_run_skips_the_preload(onnx_config, mock_factory):
    with pipe() as stream:
        runtime, task = await start(onnx_config, stream, mock_factory)
        try:
            assert runtime.memory is not None
            await asyncio.sleep(1.0)  # the preload of a cached model takes about 0.3 s
            assert not runtime.memory.model_ready  # recall uses keywords; nothing waits
            assert not runtime.memory.wait_for_model
        finally:
            runtime.request_stop("test")
            await asyncio.wait_for(task, 60)


async def test_a_piped_run_beside_a_network_channel_preloads_the_model(isolated_env, embedder,
                                                                       model_state_dir, mock_factory):
    """It keeps running after the input ends (Telegram), so recall must not stay keyword-only."""
    with FakeTelegram() as telegram, pipe() as stream:
        env = dict(isolated_env, EDGE_CHANNELS__TELEGRAM__BOT_TOKEN=telegram.token,
                   EDGE_CHANNELS__TELEGRAM__API_BASE=telegram.api_base)
        loaded = onnx_loaded(env, model_state_dir)
        runtime, task = await start(loaded, stream, mock_factory)
        try:
            await asyncio.wait_for(runtime.ready.wait(), 20)  # the channels are built
            assert set(runtime.channels) == {"cli", "telegram"} and runtime.keeps_running()
            assert runtime.memory is not None
            await until(lambda: runtime.memory.model_ready, timeout=60)
            assert runtime.memory.embedder.loaded
        finally:
            runtime.request_stop("test")
            await asyncio.wait_for(task, 60)
