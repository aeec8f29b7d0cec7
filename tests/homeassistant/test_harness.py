"""The harness's reading of home-assistant.log (what counts as a warning about the agent) and
where it keeps Home Assistant's venv; no Home Assistant is started here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.homeassistant.harness import VERSION, HomeAssistant, cache_dir

LOG = """\
2026-11-26 06:55:03.053 WARNING (MainThread) [homeassistant.bootstrap] Skipping pip installation
2026-11-26 06:55:04.100 DEBUG (MainThread) [homeassistant.components.mqtt.client] Received b'ON'
2026-11-26 06:55:30.916 WARNING (MainThread) [homeassistant.components.sensor] Entity \
sensor.greenhouse_energy_energy is using state class 'measurement' which is impossible
2026-11-26 06:55:31.001 ERROR (MainThread) [homeassistant.util.logging] Exception in \
message_received when handling msg on 'edge-agent/greenhouse/lamp/duty': 'x'
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/homeassistant/components/light/__init__.py", line 1
ValueError: could not convert string to float: 'x'
2026-11-26 06:55:32.000 ERROR (MainThread) [homeassistant.components.zone] Something else
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/homeassistant/components/zone/__init__.py", line 1
KeyError: 'x'
"""


def test_warnings_and_errors_naming_our_things_are_problems_with_their_tracebacks(tmp_path: Path) -> None:
    ha = HomeAssistant(tmp_path / "venv", tmp_path, broker_port=1883)
    try:
        ha.log_file.write_text(LOG)
        problems = ha.problems(["mqtt", "greenhouse", "sensor.greenhouse_energy_energy"], topics=["homeassistant"])
        about_others = ha.problems(["zone-of-nobody"], topics=["homeassistant"])
    finally:
        ha.stop()
    assert len(problems) == 2, problems
    assert "which is impossible" in problems[0]
    assert problems[1].endswith("ValueError: could not convert string to float: 'x'")  # its traceback
    assert not any("Skipping pip" in p or "Something else" in p for p in problems)
    assert about_others == []  # the discovery prefix in a traceback's file paths is no topic


def test_the_venv_is_cached_per_user_under_the_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "edge-agent" / "home-assistant" / VERSION
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "edge-agent" / "home-assistant" / VERSION
