"""The real model's server, once for the module (set up on first use, tests/local_model/server.py),
and the evaluation's pins on MockFactory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from edge.config.loader import load_config
from edge.hardware import Hardware, build_hardware
from tests.agent.intent_prompts import EVALUATION
from tests.local_model.server import LocalModelServer, install

collect_ignore = ["serve.py"]  # runs in the model's venv, where xllamacpp is


@pytest.fixture(scope="module")
def local_model() -> Iterator[LocalModelServer]:
    with LocalModelServer(install()) as server:
        yield server


@pytest.fixture
async def eval_hardware(write_config: Any, isolated_env: dict[str, str],
                        mock_factory: Any) -> AsyncIterator[Hardware]:
    """The evaluation's pins (:mod:`tests.agent.intent_prompts`): the model's calls are not held
    for approval, GPIO5 is outside the allowlist."""
    config = load_config(write_config(EVALUATION), env=isolated_env).config
    hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
    await hardware.start()
    yield hardware
    await hardware.shutdown()
