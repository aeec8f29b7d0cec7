"""``[cameras.NAME]``: a camera the agent takes pictures with (``/photo NAME``, ``edge-cli
camera snapshot NAME``, the ``camera_snapshot`` tool, Home Assistant's image entity).

``type`` picks the schema: a camera type's options (registered in
:data:`edge.cameras.registry.CAMERAS`) with ``type`` added. Every camera has ``width``,
``height``, ``rotation`` (0, 90, 180, 270: clockwise), ``quality`` and ``timeout_seconds``.

>>> section = parse_camera({"type": "v4l2", "device": "/dev/video0", "rotation": 90})
>>> section.device, section.width, section.height, section.capture_size
('/dev/video0', 1280, 720, (720, 1280))
>>> parse_camera({"type": "rpicam", "quality": 70}).command
'rpicam-still'
>>> camera_name("snapshot")
Traceback (most recent call last):
...
ValueError: camera name 'snapshot' is taken by `edge-cli camera snapshot NAME`; choose another name
"""

from __future__ import annotations

import functools
from typing import Annotated

from pydantic import AfterValidator, TypeAdapter

from edge.cameras.base import ConfiguredCamera
from edge.cameras.registry import CAMERAS
from edge.config.section import Section, SectionByType, adapter_section, check_name

RESERVED_CAMERA_NAMES = frozenset({"snapshot"})
"""Words of ``edge-cli camera snapshot NAME``, so never a camera's name."""


def camera_name(value: str) -> str:
    """A camera's name, as ``/photo NAME`` and ``edge-cli camera snapshot NAME`` write it."""
    if value in RESERVED_CAMERA_NAMES:
        raise ValueError(f"camera name {value!r} is taken by `edge-cli camera {value} NAME`; "
                         "choose another name")
    return check_name(value, "camera name", "; /photo NAME takes it")


CameraName = Annotated[str, AfterValidator(camera_name)]


class CameraSection(Section, ConfiguredCamera):
    """What every camera section has besides its type's options: its type."""


@functools.cache
def camera_section(kind: str) -> type[CameraSection] | None:
    """Camera type ``kind``'s section, made on first use: its options with ``type``; None when
    there is no such type."""
    spec = CAMERAS.find(kind)
    return adapter_section(kind, spec.options, CameraSection) if spec is not None else None


_BY_TYPE = SectionByType(camera_section, lambda: CAMERAS.kinds)

CameraConfig = Annotated[CameraSection, _BY_TYPE]
"""One ``[cameras.NAME]`` section, by its ``type``."""


def camera_sections() -> dict[str, type[CameraSection]]:
    """Every camera type's section, in the registry's order: loads them all."""
    return _BY_TYPE.members()


@functools.cache
def _camera_adapter() -> TypeAdapter[CameraConfig]:
    return TypeAdapter(CameraConfig)


def parse_camera(data: object) -> CameraSection:
    """One section on its own (tests, `edge-cli config` edits); a ValidationError if it is wrong."""
    return _camera_adapter().validate_python(data)
