"""Pictures reach a Telegram user through the loopback Bot API as real JPEGs: ``/photo NAME`` and
the model's ``camera_snapshot`` tool, from the Pi camera (the stand-in rpicam-still on PATH,
tests/cameras/standin.py); strangers get none, and each sender's pictures are rate-limited. A
Signal user gets the same picture as an attachment through the loopback signal-cli daemon."""

from __future__ import annotations

import base64
import io
import os
import re

import pytest
from PIL import Image

from edge.tools.camera import CameraSnapshotTool
from tests.cameras.standin import BLUE, RED, calls, install, near
from tests.fakes.openai_server import OpenAIServer, completion
from tests.fakes.signal_server import signal_config
from tests.fakes.telegram_server import captions_to, photos_to, telegram_config, texts_to
from tests.helpers import asker, until

MARKER = re.compile(r"\[IMAGE:([^\]]+)\]")
CAMERAS = """
[cameras.shed]
type = "rpicam"
width = 800
height = 600
settle_seconds = 0.1
"""




@pytest.fixture
def rpicam(tmp_path, monkeypatch):
    log = install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return log


def camera_tool(agent) -> CameraSnapshotTool:
    tool = agent.runtime.tools["camera_snapshot"]
    assert isinstance(tool, CameraSnapshotTool) and tool in agent.runtime.agent.tools
    return tool


def is_the_shed(picture: Image.Image) -> bool:
    rgb = picture.convert("RGB")
    return (picture.format == "JPEG" and picture.size == (800, 600)
            and near(rgb.getpixel((400, 100)), RED) and near(rgb.getpixel((400, 500)), BLUE))


async def test_photo_command_sends_the_cameras_picture(telegram, start_agent, rpicam):
    agent = await start_agent(telegram_config(telegram) + CAMERAS)
    camera_tool(agent)
    telegram.push_message(42, "/photo shed")
    [photo] = await until(lambda: photos_to(telegram, 42), timeout=30)
    assert is_the_shed(photo)
    [caption] = captions_to(telegram, 42)  # one message: the picture and its caption
    assert texts_to(telegram, 42) == []
    assert re.fullmatch(r"shed, \d\d:\d\d:\d\d: 800x600, \d+ kB", caption), caption
    assert len(calls(rpicam)) == 1

    telegram.push_message(42, "/photo garden")
    await until(lambda: len(texts_to(telegram, 42)) == 1)
    assert texts_to(telegram, 42)[0] == "Error: no camera 'garden' (cameras: shed)"
    telegram.push_message(42, "/photo")
    await until(lambda: len(texts_to(telegram, 42)) == 2)
    assert texts_to(telegram, 42)[1] == "Usage: /photo NAME  (cameras: shed)"
    telegram.push_message(99, "/photo shed")  # not an allowed user
    telegram.push_message(43, "/photo shed")
    await until(lambda: photos_to(telegram, 43), timeout=30)
    assert photos_to(telegram, 99) == [] and len(telegram.sent("sendPhoto")) == 2
    assert len(calls(rpicam)) == 2  # the stranger's /photo took no picture


async def test_the_model_sends_the_picture_with_its_reply(telegram, start_agent, rpicam):
    def model(body):
        tool_results = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_results:
            return 200, completion(tool_calls=[{"name": "camera_snapshot",
                                                "arguments": {"name": "shed"}}])
        [path] = MARKER.findall(str(tool_results[-1]["content"]))
        return 200, completion(f"The shed door is shut.\n[IMAGE:{path}]")

    with OpenAIServer(responder=model) as server:
        extra = (f'[provider]\nbase_url = "{server.base_url}"\nmodel = "m"\n'
                 '[agent]\ndebounce_ms = 0\n')
        agent = await start_agent(telegram_config(telegram) + CAMERAS + extra)
        camera_tool(agent)
        telegram.push_message(42, "is the shed door shut?")
        [photo] = await until(lambda: photos_to(telegram, 42), timeout=30)
    assert is_the_shed(photo)
    assert "camera_snapshot" in {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert captions_to(telegram, 42)[0].startswith("The shed door is shut.")


async def test_each_sender_has_a_few_pictures_a_minute_and_the_outbox_keeps_the_last(
        start_agent, rpicam):
    agent = await start_agent("[channels.cli]\nenabled = false\n" + CAMERAS)
    tool = camera_tool(agent)
    tool.limit.per_minute = 2
    results = [await tool.execute({"name": "shed"}, asker("telegram:42")) for _ in range(3)]
    assert [r.success for r in results] == [True, True, False]
    assert results[2].error.startswith("at most 2 pictures a minute; try again in")
    assert len(calls(rpicam)) == 2
    other = await tool.execute({"name": "shed"}, asker("telegram:43"))
    assert other.success and other.data["marker"] == f"[IMAGE:{other.data['path']}]"
    assert other.data["width"] == 800 and other.data["bytes"] > 1000
    cameras = tool.cameras
    assert cameras.outbox is not None
    assert sorted(p.name for p in cameras.outbox.glob("photo-shed-*.jpg")) == sorted(
        os.path.basename(r.data["path"]) for r in [*results[:2], other])


async def test_photo_reaches_a_signal_user_as_an_attachment(signal_daemon, start_agent, rpicam):
    await start_agent(signal_config(signal_daemon, ["+4917600000001"]) + CAMERAS)
    await until(lambda: signal_daemon.streams)
    signal_daemon.push_message("+4917600000001", "/photo shed")
    [sent] = await until(lambda: [p for p in signal_daemon.sent() if p.get("attachments")], timeout=30)
    [attachment] = sent["attachments"]
    head, _, data = attachment.partition(";base64,")
    assert head.startswith("data:image/jpeg;filename=photo-shed-") and head.endswith(".jpg")
    picture = Image.open(io.BytesIO(base64.b64decode(data, validate=True)))
    assert is_the_shed(picture)
    assert re.fullmatch(r"shed, \d\d:\d\d:\d\d: 800x600, \d+ kB", sent["message"])
    assert sent["recipient"] == ["+4917600000001"]
