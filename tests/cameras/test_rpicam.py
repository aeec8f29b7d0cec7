"""The Pi camera through ``rpicam-still``'s documented command line, against a stand-in on PATH
that takes only those options and writes a real JPEG (tests/cameras/standin.py)."""

from __future__ import annotations

import io
import os
import time

import pytest
from PIL import Image

from edge.cameras.registry import create_camera
from edge.core.exc import EdgeError
from tests.cameras.standin import BLUE, RED, calls, install, near


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    """``install(mode)`` puts the stand-in first on PATH; returns its log of command lines."""
    def put(mode: str = "picture", name: str = "rpicam-still"):
        log = install(tmp_path / "bin", mode, name)
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
        return log
    return put


def decoded(jpeg: bytes) -> Image.Image:
    picture = Image.open(io.BytesIO(jpeg))
    assert picture.format == "JPEG"
    return picture.convert("RGB")


async def test_a_snapshot_runs_the_documented_command_line_and_gives_its_jpeg(on_path):
    log = on_path()
    camera = create_camera("shed", "rpicam", {"width": 640, "height": 480, "quality": 70,
                                              "settle_seconds": 0.5})
    picture = decoded(await camera.snapshot())
    [call] = calls(log)
    assert call["argv"][:-1] == ["--nopreview", "--camera", "0", "--timeout", "500", "--width",
                                 "640", "--height", "480", "--rotation", "0", "--quality", "70",
                                 "--encoding", "jpg", "--output"]
    assert picture.size == (640, 480)
    assert near(picture.getpixel((320, 100)), RED) and near(picture.getpixel((320, 380)), BLUE)
    assert not os.path.exists(call["argv"][-1])  # the scratch file is gone


async def test_rotation_180_is_rpicam_stills_own(on_path):
    log = on_path()
    picture = decoded(await create_camera("shed", "rpicam", {"width": 320, "height": 240,
                                                             "rotation": 180}).snapshot())
    assert calls(log)[0]["argv"][9:11] == ["--rotation", "180"]
    assert picture.size == (320, 240)
    assert near(picture.getpixel((160, 40)), BLUE) and near(picture.getpixel((160, 200)), RED)


@pytest.mark.parametrize(("rotation", "red_side"), [(90, "right"), (270, "left")])
async def test_a_quarter_turn_is_taken_upright_and_turned_clockwise(on_path, rotation, red_side):
    """rpicam-still turns by 0 or 180 only: the camera is asked for the turned size, and the
    picture is turned afterwards (the camera's top ends up on the right at 90 degrees)."""
    log = on_path()
    picture = decoded(await create_camera("shed", "rpicam", {"width": 640, "height": 360,
                                                             "rotation": rotation}).snapshot())
    argv = calls(log)[0]["argv"]
    assert argv[argv.index("--width") + 1] == "360" and argv[argv.index("--height") + 1] == "640"
    assert argv[argv.index("--rotation") + 1] == "0"
    assert picture.size == (640, 360)
    left, right = picture.getpixel((80, 180)), picture.getpixel((560, 180))
    assert near(right if red_side == "right" else left, RED)
    assert near(left if red_side == "right" else right, BLUE)


async def test_no_camera_fails_with_what_rpicam_still_said(on_path):
    on_path("fail")
    with pytest.raises(EdgeError, match=r"camera shed: rpicam-still failed \(exit 255\): "
                                        r"ERROR: \*\*\* no cameras available \*\*\*"):
        await create_camera("shed", "rpicam", {}).snapshot()


async def test_a_camera_that_hangs_is_killed_at_the_timeout(on_path):
    log = on_path("hang")
    started = time.monotonic()
    with pytest.raises(EdgeError, match=r"no picture within 1 s \(rpicam-still killed\)"):
        await create_camera("shed", "rpicam", {"timeout_seconds": 1}).snapshot()
    assert time.monotonic() - started < 5
    [call] = calls(log)
    with pytest.raises(ProcessLookupError):
        os.kill(call["pid"], 0)


async def test_another_program_name_for_older_pi_os(on_path):
    log = on_path(name="libcamera-still")
    jpeg = await create_camera("shed", "rpicam", {"command": "libcamera-still"}).snapshot()
    assert decoded(jpeg).size == (1280, 720) and len(calls(log)) == 1


async def test_no_program_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EdgeError, match=r"rpicam-still not found; install rpicam-apps"):
        await create_camera("shed", "rpicam", {}).snapshot()
