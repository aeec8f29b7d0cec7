"""The v4l2 camera on a real Video4Linux2 device: the kernel's ``vivid`` test driver, loaded at
the guest's boot (tests/kernel/image.py), gives ``/dev/video0``, a webcam-like capture node
that streams its test pattern (75% colour bars: white, yellow, cyan, green, magenta, red, blue,
black, left to right) through the same ioctls and mmap'd buffers as a USB webcam.

``edge-cli camera snapshot`` runs in the guest with no agent, so it takes the picture itself
(config, the camera registry, linuxpy, Pillow) and writes it into the mailbox, where the host
decodes it and reads the bars back.
"""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from tests.kernel.agent import HOME
from tests.kernel.guest import PYTHON, KernelGuest

CONFIG = f"{HOME}/camera.toml"
CAMERAS = """
[cameras.door]
type = "v4l2"
device = "/dev/video0"
width = 640
height = 360
skip_frames = 2

[cameras.sideways]
type = "v4l2"
device = "/dev/video0"
width = 360
height = 640
rotation = 90
quality = 70
skip_frames = 2

[cameras.nowhere]
type = "v4l2"
device = "/dev/video9"
"""
BARS = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191),
        (191, 0, 0), (0, 0, 191), (0, 0, 0)]
"""vivid's 75% colour bars, left to right, in RGB."""


def snapshot(guest: KernelGuest, camera: str) -> tuple[dict, bytes | None]:
    """``edge-cli camera snapshot CAMERA --json`` in the guest; its JSON and the JPEG."""
    out = guest.run([str(PYTHON.parent / "edge-cli"), "camera", "snapshot", camera, "--output",
                     f"/mailbox/{camera}.jpg", "--json", "--config", CONFIG],
                    env={"HOME": HOME}, timeout=180)
    payload = json.loads(out["stdout"])
    assert payload["exit_code"] == out["rc"], out
    written = guest.mailbox / f"{camera}.jpg"
    return payload, written.read_bytes() if written.exists() else None


def near(color: tuple[int, ...], expected: tuple[int, int, int], slack: int = 40) -> bool:
    return all(abs(a - b) <= slack for a, b in zip(color[:3], expected, strict=True))


@pytest.fixture(scope="module")
def guest(kernel_guest: KernelGuest) -> KernelGuest:
    kernel_guest.run(["mkdir", "-p", HOME])
    kernel_guest.write(CONFIG, CAMERAS)
    return kernel_guest


def test_vivid_gives_a_capture_node(guest: KernelGuest):
    name = guest.run(["cat", "/sys/class/video4linux/video0/name"])
    assert name["rc"] == 0 and name["stdout"].strip() == "vivid-000-vid-cap", name


def test_a_snapshot_is_the_test_pattern_as_a_jpeg_of_the_asked_size(guest: KernelGuest):
    payload, jpeg = snapshot(guest, "door")
    assert payload["ok"], payload
    assert payload["via"] == "direct"
    assert jpeg is not None and jpeg.startswith(b"\xff\xd8\xff")
    assert payload["data"]["bytes"] == len(jpeg)
    picture = Image.open(io.BytesIO(jpeg))
    assert picture.format == "JPEG" and picture.size == (640, 360)
    picture = picture.convert("RGB")
    middle = [picture.getpixel((round((i + 0.5) * 640 / 8), 200)) for i in range(8)]
    assert [near(c, bar) for c, bar in zip(middle, BARS, strict=True)] == [True] * 8, middle


def test_rotation_turns_the_picture_clockwise(guest: KernelGuest):
    payload, jpeg = snapshot(guest, "sideways")
    assert payload["ok"], payload
    picture = Image.open(io.BytesIO(jpeg or b"")).convert("RGB")
    assert picture.size == (360, 640)  # captured 640x360, turned a quarter clockwise
    down = [picture.getpixel((180, round((i + 0.5) * 640 / 8))) for i in range(8)]
    # the bars' left (white) is at the top now, their right (black) at the bottom
    assert [near(c, bar) for c, bar in zip(down, BARS, strict=True)] == [True] * 8, down


def test_a_device_that_is_not_there_fails_saying_so(guest: KernelGuest):
    payload, jpeg = snapshot(guest, "nowhere")
    assert payload["exit_code"] == 1 and jpeg is None
    assert "/dev/video9" in payload["error"] and "No such file" in payload["error"], payload
