"""What the picture tools share (``sensor_chart``, ``camera_snapshot``): a per-sender limit, since
a drawing or a capture keeps a core or a camera busy, and the result that hands the model the
``[IMAGE:path]`` line making the channel send the picture from the outbox
(:mod:`edge.channels.outbox`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edge.core.ratelimit import SlidingWindow
from edge.tools.base import ToolResult


class PictureLimit:
    """At most ``per_minute`` pictures (``what``: chart, picture) a minute per sender."""

    def __init__(self, per_minute: int, what: str):
        self.per_minute = per_minute
        self.what = what
        self._rates = SlidingWindow(60.0)

    def refusal(self, caller: str) -> ToolResult | None:
        """None when ``caller`` may have one more now (and counts it); else the refusal."""
        if self._rates.take(caller, self.per_minute):
            return None
        wait = self._rates.wait(caller, self.per_minute)
        plural = self.what if self.per_minute == 1 else f"{self.what}s"
        return ToolResult(False, error=f"at most {self.per_minute} {plural} a minute; try again in "
                                       f"{wait:.0f} s")


def picture_sent(path: Path, caption: str, what: str, data: dict[str, Any]) -> ToolResult:
    """The picture at ``path`` is in the outbox: the caption and the line that sends it."""
    marker = f"[IMAGE:{path}]"
    return ToolResult(True, f"{caption}\nTo send the {what}, put this line in your reply: {marker}",
                      data={"path": str(path), "marker": marker, **data})
