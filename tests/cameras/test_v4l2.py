"""What the v4l2 camera does with a frame, for the formats vivid (tests/kernel/test_camera.py)
does not send: a webcam's MJPEG, RGB24, rows padded past the picture; and what it says when its
library is missing. The capture itself runs on the kernel's vivid device."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest
from PIL import Image
from pydantic import ValidationError

from edge.cameras import v4l2
from edge.cameras.registry import create_camera
from edge.core.exc import EdgeError
from tests.cameras.standin import near

RED = (220, 20, 20)


def frame_format(width: int, height: int, stride: int = 0) -> SimpleNamespace:
    return SimpleNamespace(width=width, height=height, bytes_per_line=stride)


def yuyv(width: int, height: int, y: int, u: int, v: int, pad: int = 0) -> bytes:
    row = bytes([y, u, y, v]) * (width // 2) + b"\x00" * pad
    return row * height


def test_mjpeg_frames_are_decoded_as_webcams_send_them():
    sent = io.BytesIO()
    Image.new("RGB", (320, 240), RED).save(sent, "JPEG")
    picture = v4l2._decode(sent.getvalue(), frame_format(320, 240), "MJPEG")
    assert picture.size == (320, 240) and near(picture.convert("RGB").getpixel((10, 10)), RED)


@pytest.mark.parametrize("pad", [0, 64])
def test_yuyv_is_unpacked_row_by_row(pad):
    # BT.601 red: Y 81, Cb 90, Cr 240
    picture = v4l2._decode(yuyv(64, 48, 81, 90, 240, pad), frame_format(64, 48, 128 + pad), "YUYV")
    assert picture.size == (64, 48) and picture.mode == "RGB"
    assert near(picture.getpixel((0, 0)), (255, 0, 0)) and near(picture.getpixel((63, 47)), (255, 0, 0))


def test_rgb24_with_padded_rows():
    row = bytes(RED) * 16 + b"\xff" * 16
    picture = v4l2._decode(row * 8, frame_format(16, 8, 64), "RGB24")
    assert picture.size == (16, 8) and picture.getpixel((15, 7)) == RED


def test_the_device_is_a_node_under_dev():
    with pytest.raises(ValidationError, match="name the device node"):
        create_camera("door", "v4l2", {"device": "video0"})
    with pytest.raises(ValidationError, match="device"):
        create_camera("door", "v4l2", {})


async def test_without_linuxpy_it_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(v4l2, "unavailable_reason",
                        lambda name: f"{name}: not installed in this environment")
    with pytest.raises(EdgeError, match=r"camera door: v4l2 cameras need linuxpy \(linuxpy: not "
                                        r"installed in this environment\): install it into the "
                                        r"agent's venv \(sudo /opt/edge-agent/venv/bin/pip "
                                        r"install linuxpy"):
        await create_camera("door", "v4l2", {"device": "/dev/video0"}).snapshot()


def test_without_pillow_it_says_how_to_get_it_there_and_on_32_bit_pi_os(monkeypatch):
    import importlib.util
    import platform

    from edge.cameras import base

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "PIL"
                        else real_find_spec(name, *args))
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    said = base.pillow_missing()
    assert said is not None and said.startswith(
        "camera pictures need pillow (PIL: not installed in this environment): pip "
        "install pillow into the agent's environment; on 32-bit Pi OS, install Raspberry Pi "
        "OS's package (sudo apt install python3-pil)")
    monkeypatch.setattr(platform, "machine", lambda: "armv7l")
    there = base.pillow_missing() or ""
    assert "): install Raspberry Pi OS's package (sudo apt install python3-pil)" in there
    assert "pip install pillow" not in there
    with pytest.raises(EdgeError, match="sudo apt install python3-pil"):
        base.pillow()
