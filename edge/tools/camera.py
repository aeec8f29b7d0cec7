"""``camera_snapshot``: a picture from one of the agent's cameras, for the model to send with its
reply and for ``/photo`` in chat (which calls it, so both share one rate limit per sender).

Read-only: it takes the picture into the outbox and returns the ``[IMAGE:path]`` marker that
makes the channel send it (:mod:`edge.channels.outbox`); the channel's allowlist decides who
gets there at all. Each sender may have :data:`PHOTOS_PER_MINUTE` pictures a minute.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from edge.core.exc import EdgeError
from edge.core.requester import Requester
from edge.tools.base import ModelTool, ToolArgs, ToolResult
from edge.tools.pictures import PictureLimit, picture_sent

if TYPE_CHECKING:  # the agent's cameras: the catalog describes the tool without loading them
    from edge.cameras.service import CameraService

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
        self.limit = PictureLimit(per_minute, "picture")

    async def run(self, params: SnapshotArgs, requester: Requester) -> ToolResult:
        try:
            self.cameras.camera(params.name)
        except EdgeError as exc:
            return ToolResult(False, error=str(exc), data={"unknown": True})
        if refused := self.limit.refusal(requester.caller):
            return refused
        try:
            path, shot = await self.cameras.to_outbox(params.name)
        except EdgeError as exc:
            return ToolResult(False, error=str(exc))
        return picture_sent(path, shot.caption(), "picture", shot.as_dict())
