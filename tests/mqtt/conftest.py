"""Brokers for the MQTT tests: a real Mosquitto per test (anonymous unless the test asks)."""

from __future__ import annotations

import pytest

from tests.fakes.mosquitto import Mosquitto


@pytest.fixture
def broker(tmp_path):
    with Mosquitto(tmp_path / "broker") as running:
        yield running
