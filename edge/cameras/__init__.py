"""Cameras: ``[cameras.NAME]`` sections, each a :class:`~edge.cameras.base.Camera` that takes one
picture as JPEG without blocking the event loop.

| what | module |
| --- | --- |
| the boundary: ``Camera.snapshot() -> bytes``, the common keys, Pillow's turn and encoding | ``base.py`` |
| the Pi camera through ``rpicam-still`` | ``rpicam.py`` |
| a USB webcam (any V4L2 capture device) through linuxpy | ``v4l2.py`` |
| the types by name, and other packages' through ``edge_agent.cameras`` | ``registry.py`` |
| the agent's cameras: one picture at a time each, into the outbox, to listeners (MQTT) | ``service.py`` |

Adding a camera type: one module with its options (a :class:`~edge.cameras.base.CameraOptions`)
and ``SPEC = CameraSpec("kind", Options, build)``, and one line in
:data:`edge.cameras.registry.CAMERAS`; its ``[cameras.NAME] type = "kind"`` section, with every
problem reported as the config's others are, follows from the spec (:mod:`edge.config.cameras`).
"""

__all__ = ["base", "registry", "rpicam", "service", "v4l2"]
