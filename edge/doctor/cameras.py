"""The cameras check: for each ``[cameras.NAME]``, whether this machine has what a picture
needs (``rpicam-still`` on the PATH, the V4L2 library and Pillow), as its type's spec says
(:attr:`edge.cameras.base.CameraSpec.missing`). Its device node is the devices check's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.doctor import Check

if TYPE_CHECKING:
    from edge.config.loader import LoadedConfig


def check_cameras(loaded: LoadedConfig) -> Check | None:
    """None when no camera is configured."""
    from edge.cameras.registry import CAMERAS

    cameras = loaded.config.cameras
    if not cameras:
        return None
    lacking = {name: why for name, camera in cameras.items()
               if (why := CAMERAS.get(camera.type).missing(camera))}
    if lacking:
        return Check("cameras", "fail", "; ".join(f"{name}: {why}" for name, why in lacking.items()),
                     "install what each camera lacks (above), then `edge-cli camera snapshot NAME "
                     "--output /tmp/test.jpg` to try it")
    return Check("cameras", "ok", ", ".join(f"{name} ({camera.type})"
                                            for name, camera in cameras.items()))
