"""Each camera is a Home Assistant MQTT ``image`` entity on a real Mosquitto: its retained
discovery config follows image.mqtt's schema (``image_topic`` with raw bytes,
``content_type: image/jpeg``) on the node's device, and every picture the agent takes arrives
on that topic as the very JPEG it sent to chat."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from tests.cameras.standin import RED, install, near
from tests.fakes.mosquitto import Watcher
from tests.helpers import asker, until

CONFIG = """
[channels.cli]
enabled = false
[mqtt]
url = "{url}"
node_id = "pi1"
[cameras.door]
type = "rpicam"
width = 640
height = 480
settle_seconds = 0.1
"""
DISCOVERY = "homeassistant/image/pi1/camera_door/config"
IMAGE_TOPIC = "edge-agent/pi1/camera/door"
DOCUMENTED = {  # image.mqtt's keys, with the ones every MQTT entity takes
    "name", "unique_id", "availability_topic", "payload_available", "payload_not_available",
    "device", "qos", "image_topic", "content_type", "image_encoding", "url_topic",
    "url_template", "entity_category"}


@pytest.fixture
def rpicam(tmp_path, monkeypatch):
    install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")


async def test_a_camera_is_an_image_entity_that_gets_each_picture(broker, start_agent, rpicam):
    async with Watcher(broker, "homeassistant/image/#", "edge-agent/pi1/camera/#") as seen:
        agent = await start_agent(CONFIG.format(url=broker.url))
        config = json.loads(await seen.wait(DISCOVERY, timeout=10))
        assert set(config) <= DOCUMENTED, set(config) - DOCUMENTED
        assert config["image_topic"] == IMAGE_TOPIC and config["content_type"] == "image/jpeg"
        assert "image_encoding" not in config  # raw bytes, as the topic carries them
        assert config["name"] == "door" and config["unique_id"] == "pi1_camera_door"
        assert config["device"]["identifiers"] == ["edge-agent-pi1"]
        assert config["availability_topic"] == "edge-agent/pi1/availability"
        assert seen.payloads(IMAGE_TOPIC) == []  # no picture before one is taken

        tool = agent.runtime.tools["camera_snapshot"]
        taken = await tool.execute({"name": "door"}, asker("telegram:42"))
        assert taken.success, taken.error
        published = await seen.wait(IMAGE_TOPIC, timeout=10)
        assert published == Path(taken.data["path"]).read_bytes()
        picture = Image.open(io.BytesIO(published))
        assert picture.format == "JPEG" and picture.size == (640, 480)
        assert near(picture.convert("RGB").getpixel((320, 60)), RED)

        again = await tool.execute({"name": "door"}, asker("telegram:43"))
        await until(lambda: len(seen.payloads(IMAGE_TOPIC)) == 2, timeout=10)
        assert seen.payloads(IMAGE_TOPIC)[-1] == Path(again.data["path"]).read_bytes()
