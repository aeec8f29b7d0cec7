"""``camera_snapshot``: a picture from one of the agent's cameras, for the model to send with its
reply and for ``/photo`` in chat (which calls it, so both share one rate limit per sender).

Read-only: it takes the picture into the outbox and returns the ``[IMAGE:path]`` marker that
makes the channel send it (:mod:`edge.channels.outbox`); the channel's allowlist decides who
gets there at all. Each sender may have :data:`PHOTOS_PER_MINUTE` pictures a minute.
"""

from __future__ import annotations

from pydantic import Field

from edge.cameras.service import CameraService
from edge.core.exc import EdgeError
from edge.core.ratelimit import SlidingWindow
from edge.core.requester import Requester
from edge.tools.base import ModelTool, ToolArgs, ToolResult

PHOTOS_PER_MINUTE = 4


class SnapshotArgs(ToolArgs):
    name: str = Field(description="The camera's name (as configured in [cameras.NAME])")


class CameraSnapshotTool(ModelTool[SnapshotArgs]):
    name = "camera_snapshot"
    description = ("Take a picture with one of the agent's cameras and get the marker that sends "
                   "it with your reply. Read-only.")
    Params = SnapshotArgs

    def __init__(self, cameras: CameraService, *, per_minute: int = PHOTOS_PER_MINUTE):
        self.cameras = cameras
        self.per_minute = per_minute
        self._rates = SlidingWindow(60.0)

    async def run(self, params: SnapshotArgs, requester: Requester) -> ToolResult:
        try:
            self.cameras.camera(params.name)
        except EdgeError as exc:
            return ToolResult(False, error=str(exc), data={"unknown": True})
        if not self._rates.take(requester.caller, self.per_minute):
            wait = self._rates.wait(requester.caller, self.per_minute)
            photos = "picture" if self.per_minute == 1 else "pictures"
            return ToolResult(False, error=f"at most {self.per_minute} {photos} a minute; "
                                           f"try again in {wait:.0f} s")
        try:
            path, shot = await self.cameras.to_outbox(params.name)
        except EdgeError as exc:
            return ToolResult(False, error=str(exc))
        marker = f"[IMAGE:{path}]"
        return ToolResult(True, f"{shot.caption()}\nTo send the picture, put this line in your "
                                f"reply: {marker}",
                          data={"path": str(path), "marker": marker, **shot.as_dict()})
