"""Each camera on the broker: a Home Assistant MQTT ``image`` entity whose ``image_topic``,
``<base>/camera/<camera>``, carries each picture the agent takes as raw JPEG bytes
(``content_type: image/jpeg``, Home Assistant's image.mqtt schema). The picture is published
whenever one is taken (``/photo``, the model's ``camera_snapshot``, ``edge-cli camera
snapshot``); a camera that has taken none yet shows no picture.

Its discovery config is :func:`edge.mqtt.discovery.image_config`.

>>> camera_object_id("front door")
'camera_front_door'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from edge.mqtt.topic_names import slugify

COMPONENT = "image"
CONTENT_TYPE = "image/jpeg"


class CameraFeed(Protocol):
    """What the bridge needs of the cameras (:class:`edge.cameras.service.CameraService`)."""

    @property
    def names(self) -> list[str]: ...

    def subscribe(self, listener: Callable[[str, bytes], None]) -> Callable[[], None]:
        """Call ``listener(camera, jpeg)`` on the event loop for each picture taken."""
        ...


def camera_object_id(camera: str) -> str:
    return f"camera_{slugify(camera)}"
