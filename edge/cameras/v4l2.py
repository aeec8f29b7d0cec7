"""``type = "v4l2"``: a USB webcam (or any Video4Linux2 capture device) at ``device``, read with
linuxpy (the kernel's V4L2 uAPI in pure Python, GPL-3.0-or-later, installed into the
agent's venv by the user: ``pip install linuxpy``, or this project's ``[v4l2]`` extra).

One picture: the device is opened, asked for the picture's size in the best format it offers
(MJPEG as webcams send it, else YUYV 4:2:2, else RGB24), a few frames are let pass while its
exposure settles, and the next one is encoded as JPEG by Pillow, turned as ``rotation`` says.
All of it runs in a thread that waits for frames with ``select`` against the section's
deadline, so a webcam that stops sending ends in an error, never a stuck thread; the device
is closed after each picture, so other programs may use it in between.
"""

from __future__ import annotations

import asyncio
import io
import logging
import select
import time
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, Field

from edge.cameras.base import (
    Camera,
    CameraOptions,
    CameraSpec,
    finish_jpeg,
    pillow,
    pillow_missing,
)
from edge.core.exc import EdgeError
from edge.core.wheels import unavailable_reason
from peripherals.base import DeviceNode

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

PREFERRED = ("MJPEG", "JPEG", "YUYV", "RGB24")
"""Pixel formats read, best first (linuxpy's PixelFormat names)."""


def _device_path(device: str) -> str:
    if not device.startswith("/dev/") or len(device) <= len("/dev/"):
        raise ValueError(f"{device!r}: name the device node, e.g. \"/dev/video0\" or a "
                         "/dev/v4l/by-id/... link (`v4l2-ctl --list-devices` shows them)")
    return device


class V4l2Options(CameraOptions):
    """A Video4Linux2 capture device (a USB webcam)."""

    device: Annotated[str, AfterValidator(_device_path)]
    """``/dev/video0``, or the steadier ``/dev/v4l/by-id/usb-...-video-index0``."""
    skip_frames: int = Field(default=5, ge=0, le=100)
    """Frames let pass before the picture while the webcam's exposure settles."""


def linuxpy_missing() -> str | None:
    """What to do to read V4L2 devices here, or None when linuxpy is installed."""
    reason = unavailable_reason("linuxpy")
    if reason is None:
        return None
    return (f"v4l2 cameras need linuxpy ({reason}): install it into the agent's venv "
            "(sudo /opt/edge-agent/venv/bin/pip install linuxpy for the service, or .venv/bin/pip "
            "install linuxpy in a checkout; it is GPL-3.0-or-later, so not installed by default)")


class V4l2Camera:
    kind = "v4l2"

    def __init__(self, name: str, options: V4l2Options):
        self.name = name
        self.options = options

    async def snapshot(self) -> bytes:
        missing = linuxpy_missing()
        if missing:
            raise EdgeError(f"camera {self.name}: {missing}")
        pillow()
        return await asyncio.to_thread(self.capture)

    def capture(self) -> bytes:
        """One picture, in the calling thread (:meth:`snapshot` runs it in another)."""
        from linuxpy.video.device import BufferType, Device, VideoCapture

        deadline = time.monotonic() + self.options.timeout_seconds
        try:
            with Device(self.options.device) as device:
                offered = {f.pixel_format.name for f in device.info.formats
                           if f.type == BufferType.VIDEO_CAPTURE}
                chosen = next((name for name in PREFERRED if name in offered), None)
                if chosen is None:
                    raise EdgeError(f"camera {self.name}: {self.options.device} offers none of "
                                    f"{', '.join(PREFERRED)} (it offers "
                                    f"{', '.join(sorted(offered)) or 'no capture format'})")
                capture = VideoCapture(device)
                width, height = self.options.capture_size
                capture.set_format(width, height, _fourcc(chosen))
                with capture:
                    frame = None
                    for _ in range(self.options.skip_frames + 1):
                        frame = self._next_frame(device, capture, deadline)
                    assert frame is not None
                    picture = _decode(frame.data, frame.format, chosen)
        except OSError as exc:
            raise EdgeError(f"camera {self.name}: {self.options.device}: "
                            f"{exc.strerror or exc}") from None
        if picture.size != (width, height):
            log.info("camera_size camera=%s asked=%dx%d given=%dx%d", self.name, width, height,
                     *picture.size)
        return finish_jpeg(picture, self.options.rotation, self.options.quality)

    def _next_frame(self, device: Any, capture: Any, deadline: float) -> Any:
        left = deadline - time.monotonic()
        ready = select.select([device], [], [], max(left, 0))[0] if left > 0 else []
        if not ready:
            raise EdgeError(f"camera {self.name}: {self.options.device} sent no frame within "
                            f"{self.options.timeout_seconds:g} s")
        return capture.buffer.raw_read()


def _fourcc(name: str) -> str:
    from linuxpy.video.device import PixelFormat

    code = int(PixelFormat[name])
    return "".join(chr((code >> shift) & 0xFF) for shift in (0, 8, 16, 24))


def _decode(data: bytes, format: Any, pixel_format: str) -> Image.Image:
    """A frame as a Pillow image: JPEG decoded, YUYV and RGB24 unpacked row by row."""
    image_module = pillow()
    width, height, stride = format.width, format.height, format.bytes_per_line
    data = bytes(data)
    picture: Image.Image
    if pixel_format in ("MJPEG", "JPEG"):
        picture = image_module.open(io.BytesIO(data))
        picture.load()
        return picture
    if pixel_format == "RGB24":
        picture = image_module.frombuffer("RGB", (width, height), data, "raw", "RGB", stride or 0, 1)
        return picture
    row = width * 2  # YUYV: Y0 U Y1 V, two pixels in four bytes
    if stride and stride != row:
        data = b"".join(data[y * stride:y * stride + row] for y in range(height))
    luma = image_module.frombytes("L", (width, height), data[0::2])
    half = (width // 2, height)
    blue = image_module.frombytes("L", half, data[1::4]).resize((width, height))
    red = image_module.frombytes("L", half, data[3::4]).resize((width, height))
    picture = image_module.merge("YCbCr", (luma, blue, red)).convert("RGB")
    return picture


def _devices(options: V4l2Options) -> list[DeviceNode]:
    return [DeviceNode(options.device, "video", "plug the webcam in; `ls /dev/video*` lists the "
                       "video devices (a webcam often has two: the first captures)")]


def _build(name: str, options: V4l2Options) -> Camera:
    return V4l2Camera(name, options)


SPEC = CameraSpec("v4l2", V4l2Options, _build, devices=_devices,
                  missing=lambda options: linuxpy_missing() or pillow_missing())
