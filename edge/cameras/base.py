"""The camera boundary: a :class:`Camera` takes one picture and gives it as JPEG bytes, without
blocking the event loop (a subprocess, or a thread with a deadline); its section's keys are
:class:`CameraOptions`; a :class:`CameraSpec` registers a camera type
(:data:`edge.cameras.registry.CAMERAS`).

Pictures are turned and re-encoded with Pillow (:func:`finish_jpeg`), imported when a picture is
taken, never when the config is read. On 32-bit Pi OS pip installs no Pillow (PyPI has no armv7
wheels of it): :func:`pillow_missing` says to install Debian's python3-pil.

>>> CameraOptions(width=640, height=480, rotation="90").capture_size
(480, 640)
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import Field

from edge.core.exc import EdgeError
from edge.core.wheels import install_hint
from peripherals.base import DeviceNode, no_devices
from peripherals.options import Options
from peripherals.registry import AdapterSpec

if TYPE_CHECKING:
    from PIL import Image

Rotation = Literal[0, 90, 180, 270]


class CameraOptions(Options):
    """What every camera section has: the picture's size and turn, its JPEG quality and how
    long a picture may take."""

    width: int = Field(default=1280, ge=16, le=8192)
    """The picture's width in pixels, as sent (after ``rotation``)."""
    height: int = Field(default=720, ge=16, le=8192)
    rotation: Rotation = 0
    """Clockwise degrees the picture is turned (a camera mounted sideways: 90 or 270)."""
    quality: int = Field(default=85, ge=1, le=100)
    """JPEG quality: 85 is some 100-200 kB at 1280x720."""
    timeout_seconds: float = Field(default=15.0, gt=0, le=300)
    """A picture not taken by then is given up (the camera's process killed)."""

    @property
    def capture_size(self) -> tuple[int, int]:
        """(width, height) the camera is asked for: turned by 90 or 270, the other way round."""
        if self.rotation in (90, 270):
            return self.height, self.width
        return self.width, self.height


class ConfiguredCamera(CameraOptions):
    """A camera's options with its type, as a ``[cameras.NAME]`` section gives them (the config's
    section is one, so the cameras need not know the config)."""

    type: str


class Camera(Protocol):
    """One camera. ``snapshot`` never blocks the event loop and gives up after the section's
    ``timeout_seconds`` with an :class:`~edge.core.exc.EdgeError` saying why."""

    name: str
    kind: str

    async def snapshot(self) -> bytes:
        """One picture, JPEG."""
        ...


@dataclass(frozen=True)
class CameraSpec(AdapterSpec[Any]):
    """One camera type, registered under ``kind`` (the section's ``type``). ``build(name,
    options)`` makes the camera without opening it; config validation imports every spec's
    module, so keep it light (Pillow and the V4L2 library load when a picture is taken)."""

    build: Callable[[str, Any], Camera]
    devices: Callable[[Any], Sequence[DeviceNode]] = no_devices
    """The device nodes the camera opens, for doctor's devices check."""
    missing: Callable[[Any], str | None] = lambda options: None
    """What this machine lacks to take a picture (a program, a library), for doctor."""
    options_base: ClassVar[type[Options]] = CameraOptions


def pillow_missing() -> str | None:
    """What to do to turn and encode pictures here, or None when Pillow is installed."""
    return install_hint("camera pictures", "PIL", "pillow", "python3-pil")


def pillow() -> Any:
    """``PIL.Image``, or an EdgeError saying how to install it."""
    missing = pillow_missing()
    if missing:
        raise EdgeError(missing)
    from PIL import Image

    return Image


TURNS = {90: "ROTATE_270", 180: "ROTATE_180", 270: "ROTATE_90"}
"""Clockwise degrees as Pillow's transposes, which turn counter-clockwise."""


def finish_jpeg(picture: Image.Image, rotation: int, quality: int) -> bytes:
    """``picture`` turned clockwise by ``rotation`` and encoded as JPEG."""
    image_module = pillow()
    if rotation:
        picture = picture.transpose(getattr(image_module.Transpose, TURNS[rotation]))
    if picture.mode not in ("RGB", "L"):
        picture = picture.convert("RGB")
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=quality)
    return out.getvalue()


def jpeg_size(jpeg: bytes) -> tuple[int, int]:
    """(width, height) of a JPEG, read from its frame header (no Pillow needed); an EdgeError
    when ``jpeg`` is no JPEG.

    >>> jpeg_size(bytes.fromhex("ffd8ffc0000b08000200030103011100ffd9"))
    (3, 2)
    """
    if not jpeg.startswith(b"\xff\xd8"):
        raise EdgeError("the camera gave no JPEG")
    at = 2
    while at + 4 <= len(jpeg):
        if jpeg[at] != 0xFF:
            break
        marker = jpeg[at + 1]
        length = int.from_bytes(jpeg[at + 2:at + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2) and at + 9 <= len(jpeg):
            return (int.from_bytes(jpeg[at + 7:at + 9], "big"),
                    int.from_bytes(jpeg[at + 5:at + 7], "big"))
        at += 2 + length
    raise EdgeError("the camera's JPEG has no frame header (cut short?)")
