"""The agent's cameras, built from ``[cameras.NAME]``: one picture at a time per camera, each
checked to be a JPEG, handed to whoever listens (the MQTT bridge's image entity) and, for chat,
written into the outbox (the one directory a reply's ``[IMAGE:path]`` may send from), where the
last :data:`KEPT_PHOTOS` are kept.

A camera whose picture takes longer than its ``timeout_seconds`` fails with an
:class:`~edge.core.exc.EdgeError` (its adapter kills its process or gives up waiting for
frames); an unknown camera is a :class:`~edge.core.exc.UsageError` naming the known ones.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from edge.cameras.base import Camera, ConfiguredCamera, jpeg_size
from edge.cameras.registry import create_camera
from edge.core.exc import EdgeError, UsageError
from edge.core.files import write_atomically

log = logging.getLogger(__name__)

KEPT_PHOTOS = 20
"""Pictures kept in the outbox; older ones are removed as new ones are taken."""
PHOTO_PREFIX = "photo-"
DEADLINE_MARGIN_SECONDS = 5.0
"""Beyond the camera's own timeout, how long the service waits before it gives up on it (the
adapter ends first; this catches one that does not)."""

Listener = Callable[[str, bytes], None]
"""Called on the event loop with the camera's name and each picture it takes (JPEG)."""


@dataclass(frozen=True)
class Snapshot:
    camera: str
    jpeg: bytes
    width: int
    height: int
    taken_at: float
    seconds: float
    """How long the picture took, start of the camera's process to the JPEG in hand."""

    def caption(self) -> str:
        """``door, 14:02:11: 1280x720, 143 kB``."""
        when = time.strftime("%H:%M:%S", time.localtime(self.taken_at))
        return f"{self.camera}, {when}: {self.width}x{self.height}, {len(self.jpeg) // 1000} kB"

    def as_dict(self) -> dict[str, object]:
        return {"camera": self.camera, "width": self.width, "height": self.height,
                "bytes": len(self.jpeg), "taken_at": round(self.taken_at, 3),
                "seconds": round(self.seconds, 3)}


class CameraService:
    """The configured cameras; :meth:`snapshot` takes a picture, :meth:`to_outbox` keeps it for
    a reply."""

    def __init__(self, cameras: Mapping[str, ConfiguredCamera], outbox: Path | None = None):
        self.sections = dict(cameras)
        self.outbox = outbox
        self.cameras: dict[str, Camera] = {
            name: create_camera(name, section.type, section) for name, section in cameras.items()}
        self._locks = {name: asyncio.Lock() for name in cameras}
        self._listeners: list[Listener] = []
        self.taken = {name: 0 for name in cameras}
        self.last_error: dict[str, str | None] = {name: None for name in cameras}

    @property
    def names(self) -> list[str]:
        return list(self.cameras)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(camera, jpeg)`` for every picture taken; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def camera(self, name: str) -> Camera:
        camera = self.cameras.get(name)
        if camera is None:
            known = ", ".join(self.cameras) or "none configured; add a [cameras.NAME] section"
            raise UsageError(f"no camera {name!r} (cameras: {known})")
        return camera

    async def snapshot(self, name: str) -> Snapshot:
        """One picture from camera ``name`` (a second caller waits for the first's to finish)."""
        camera = self.camera(name)
        limit = self.sections[name].timeout_seconds + DEADLINE_MARGIN_SECONDS
        async with self._locks[name]:
            started = time.monotonic()
            try:
                async with asyncio.timeout(limit):
                    jpeg = await camera.snapshot()
                width, height = jpeg_size(jpeg)
            except TimeoutError:
                self.last_error[name] = f"no picture within {limit:g} s"
                raise EdgeError(f"camera {name}: no picture within {limit:g} s") from None
            except EdgeError as exc:
                self.last_error[name] = str(exc)
                raise
            seconds = time.monotonic() - started
        self.taken[name] += 1
        self.last_error[name] = None
        log.info("camera_snapshot camera=%s type=%s size=%dx%d bytes=%d seconds=%.2f", name,
                 camera.kind, width, height, len(jpeg), seconds)
        for listener in list(self._listeners):
            try:
                listener(name, jpeg)
            except Exception:  # a listener's bug must not cost the picture
                log.exception("camera_listener_failed camera=%s", name)
        return Snapshot(name, jpeg, width, height, time.time(), seconds)

    async def to_outbox(self, name: str) -> tuple[Path, Snapshot]:
        """A picture from ``name``, written into the outbox; its path."""
        if self.outbox is None:
            raise EdgeError("this agent has no outbox to send pictures from")
        shot = await self.snapshot(name)
        path = self.outbox / f"{PHOTO_PREFIX}{name}-{time.time_ns()}.jpg"
        await asyncio.to_thread(self._keep, path, shot.jpeg)
        return path, shot

    def _keep(self, path: Path, jpeg: bytes) -> None:
        assert self.outbox is not None
        self.outbox.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomically(path, jpeg, durable=False)
        photos = sorted(self.outbox.glob(f"{PHOTO_PREFIX}*.jpg"), key=lambda p: p.stat().st_mtime_ns)
        for old in photos[:-KEPT_PHOTOS]:
            old.unlink(missing_ok=True)

    def status(self) -> list[dict[str, object]]:
        """Each camera as status shows it."""
        return [{"name": name, "type": camera.kind, "snapshots": self.taken[name],
                 "error": self.last_error[name]} for name, camera in self.cameras.items()]
