"""The outbox: the one directory a reply's ``[IMAGE:path]`` may send files from, for every
channel that sends pictures (Telegram uploads them, Signal attaches them).

A marker names a file; it is sent only when, after resolving symlinks and ``..``, it lies inside
the outbox, is a regular file no larger than the limit, and its first bytes are a PNG, JPEG, GIF
or WebP signature. Anything else, including a path that does not exist, gets the same refusal,
so a reply never tells whether a file outside the outbox exists (the log says why).

>>> image_kind(b"\\x89PNG\\r\\n\\x1a\\n...."), image_kind(b"root:x:0:0:root"), image_kind(b"RIFF\\0\\0\\0\\0WEBPVP8 ")
('png', None, 'webp')
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from edge.config.model import AgentConfig

log = logging.getLogger(__name__)

SIGNATURES = (("png", b"\x89PNG\r\n\x1a\n"), ("jpeg", b"\xff\xd8\xff"), ("gif", b"GIF87a"),
              ("gif", b"GIF89a"))
HEAD_BYTES = 12
IMAGE_MARKER = re.compile(r"\[IMAGE:([^\]]+)\]")
"""How a reply names a picture to send: ``[IMAGE:path]`` on its own line."""
IMAGE_REFUSED = ("(image not sent: only PNG, JPEG, GIF or WebP files in the outbox can be sent, "
                 "up to the size limit)")


def image_kind(head: bytes) -> str | None:
    """The image type the first bytes announce, or None."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    return next((kind for kind, magic in SIGNATURES if head.startswith(magic)), None)


@dataclass(frozen=True)
class Outbox:
    directory: Path
    max_bytes: int = AgentConfig().image_max_bytes

    @classmethod
    def from_config(cls, agent: AgentConfig, state_dir: Path) -> Outbox:
        """The configured outbox, created (0700) if missing so there is a place for images."""
        directory = agent.outbox_dir(state_dir)
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:  # no outbox: every image is refused, and the log says why
            log.warning("outbox_not_created path=%s error=%r", directory, exc)
        return cls(directory, agent.image_max_bytes)

    async def image(self, written: str) -> Path | None:
        """The real path of the image ``written`` names, if it may be sent; else None."""
        return await asyncio.to_thread(self._check, written.strip())

    def _check(self, written: str) -> Path | None:
        try:
            root = self.directory.resolve(strict=True)
            real = (root / written).resolve(strict=True)  # an absolute ``written`` replaces root
        except (OSError, RuntimeError, ValueError):
            return self._refuse(written, "missing")
        if not real.is_relative_to(root) or real == root:
            return self._refuse(written, "outside_outbox")
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return self._refuse(written, "unreadable")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return self._refuse(written, "not_a_file")
            if not 0 < info.st_size <= self.max_bytes:
                return self._refuse(written, "size")
            if image_kind(os.read(fd, HEAD_BYTES)) is None:
                return self._refuse(written, "not_an_image")
        finally:
            os.close(fd)
        return real

    @staticmethod
    def _refuse(written: str, reason: str) -> None:
        log.warning("image_refused reason=%s path=%r", reason, written[:200])
        return None
