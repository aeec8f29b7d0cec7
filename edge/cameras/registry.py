"""Every camera type, by the ``type`` its ``[cameras.NAME]`` section names. Adding one touches
its module (a :class:`~edge.cameras.base.CameraSpec` called ``SPEC``) and one line in
:data:`CAMERAS`'s table; another package registers its own through the ``edge_agent.cameras``
entry point group, as boards and sensors do (:mod:`peripherals.registry`).

>>> CAMERAS.kinds
('rpicam', 'v4l2')
>>> create_camera("door", "v4l2", {"device": "/dev/video0"}).options.width
1280
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from edge.cameras.base import Camera, CameraOptions, CameraSpec
from peripherals.registry import Registry

CAMERAS: Registry[CameraSpec] = Registry("camera", "edge_agent.cameras", {
    "rpicam": "edge.cameras.rpicam:SPEC",
    "v4l2": "edge.cameras.v4l2:SPEC",
}, CameraSpec)
"""Every camera type, by the ``type`` its section names."""


def create_camera(name: str, kind: str, options: CameraOptions | Mapping[str, Any]) -> Camera:
    """Camera ``name``, not yet opened (its first picture opens it). ``options`` is its
    validated section, or the keys to validate into one; an unknown ``kind`` is a ValueError
    naming the known ones."""
    spec = CAMERAS.get(kind)
    if not isinstance(options, spec.options):
        options = spec.options.model_validate(options)
    return spec.build(name, options)
