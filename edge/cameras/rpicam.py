"""``type = "rpicam"``: the Pi camera through Raspberry Pi OS's ``rpicam-still`` (rpicam-apps;
``libcamera-still`` before bookworm), run once per picture with its documented options::

    rpicam-still --nopreview --camera 0 --timeout 1000 --width 1280 --height 720
                 --rotation 0 --quality 85 --encoding jpg --output <file>

``--rotation`` takes 0 or 180 only (rpicam-apps: "Request an image rotation, 0 or 180"), so 90
and 270 are taken upright at the turned size and turned with Pillow afterwards. The process is
killed when ``timeout_seconds`` pass; its last words on stderr say why a picture failed (no
camera connected, the camera busy with another program).

>>> options = RpicamOptions(width=720, height=1280, rotation=90)
>>> command_line(options, "/tmp/x.jpg")[:8]
['rpicam-still', '--nopreview', '--camera', '0', '--timeout', '1000', '--width', '1280']
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import shutil
import tempfile
from pathlib import Path

from pydantic import Field

from edge.cameras.base import (
    Camera,
    CameraOptions,
    CameraSpec,
    finish_jpeg,
    jpeg_size,
    pillow,
    pillow_missing,
)
from edge.core.exc import EdgeError

log = logging.getLogger(__name__)

STDERR_SHOWN = 300
"""Characters of rpicam-still's stderr an error quotes (its last lines say why)."""


class RpicamOptions(CameraOptions):
    """The Pi camera (CSI), through ``rpicam-still``."""

    camera: int = Field(default=0, ge=0, le=7)
    """Which camera, as ``rpicam-still --list-cameras`` numbers them (a Pi 5 takes two)."""
    command: str = Field(default="rpicam-still", min_length=1)
    """The program: ``libcamera-still`` on Pi OS before bookworm, or a full path."""
    settle_seconds: float = Field(default=1.0, ge=0.001, le=60)
    """How long the camera runs before the picture (``--timeout``): exposure and white balance
    settle meanwhile; a shorter time gives darker, bluer pictures."""


def command_line(options: RpicamOptions, output: str) -> list[str]:
    """The ``rpicam-still`` argument list for one picture written to ``output``."""
    width, height = options.capture_size
    return [options.command, "--nopreview", "--camera", str(options.camera),
            "--timeout", str(max(1, round(options.settle_seconds * 1000))),
            "--width", str(width), "--height", str(height),
            "--rotation", "180" if options.rotation == 180 else "0",
            "--quality", str(options.quality), "--encoding", "jpg", "--output", output]


class RpicamCamera:
    kind = "rpicam"

    def __init__(self, name: str, options: RpicamOptions):
        self.name = name
        self.options = options

    async def snapshot(self) -> bytes:
        if self.options.rotation in (90, 270):
            pillow()  # say what is missing before the camera runs
        if shutil.which(self.options.command) is None:
            raise EdgeError(f"camera {self.name}: {not_found(self.options)}, or set "
                            f"[cameras.{self.name}] command")
        with tempfile.TemporaryDirectory(prefix="edge-camera-") as scratch:
            output = Path(scratch) / "picture.jpg"
            await self._run(command_line(self.options, str(output)))
            try:
                jpeg = output.read_bytes()
            except OSError:
                raise EdgeError(f"camera {self.name}: {self.options.command} wrote no "
                                "picture") from None
        jpeg_size(jpeg)  # an EdgeError if it is no JPEG
        if self.options.rotation in (90, 270):
            image = pillow().open(io.BytesIO(jpeg))
            jpeg = await asyncio.to_thread(finish_jpeg, image, self.options.rotation,
                                           self.options.quality)
        return jpeg

    async def _run(self, argv: list[str]) -> None:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE)
        try:
            async with asyncio.timeout(self.options.timeout_seconds):
                _, stderr = await process.communicate()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise EdgeError(f"camera {self.name}: no picture within {self.options.timeout_seconds:g}"
                            f" s ({argv[0]} killed); is the camera connected and free?") from None
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise
        if process.returncode != 0:
            said = stderr.decode("utf-8", "replace").strip()[-STDERR_SHOWN:]
            log.warning("camera_failed camera=%s command=%s code=%s stderr=%r", self.name,
                        argv[0], process.returncode, said)
            raise EdgeError(f"camera {self.name}: {argv[0]} failed (exit {process.returncode}): "
                            f"{said or 'it said nothing'}")


def not_found(options: RpicamOptions) -> str:
    return (f"{options.command} not found; install rpicam-apps (sudo apt install rpicam-apps; Pi "
            "OS Lite has it as rpicam-apps-lite)")


def _missing(options: RpicamOptions) -> str | None:
    if shutil.which(options.command) is None:
        return not_found(options)
    return pillow_missing() if options.rotation in (90, 270) else None


def _build(name: str, options: RpicamOptions) -> Camera:
    return RpicamCamera(name, options)


SPEC = CameraSpec("rpicam", RpicamOptions, _build, missing=_missing)
