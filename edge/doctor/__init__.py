"""``edge-cli doctor``: checks that say what is wrong and how to fix it.

Each check returns a :class:`Check`; ``fail`` makes the command exit 1, ``warn`` does not. Checks
read the raw config section by section, so one bad section does not hide the rest: the device
nodes a board or sensor opens come from its type's spec (``devices``), so a new board type or
sensor driver is checked with no change here; a channel is checked as its spec says
(``ChannelSpec.check``, :mod:`edge.channels.registry`).

The config's verdict, which ``edge-cli config check`` gives too, is
:mod:`~edge.doctor.config_verdict`. The checks are used by module (:mod:`~edge.doctor.agent`, :mod:`~edge.doctor.host`,
:mod:`~edge.doctor.mqtt`, :mod:`~edge.doctor.cameras`, :mod:`~edge.doctor.mcp_servers`, :mod:`~edge.doctor.memory`,
:mod:`~edge.doctor.remote`); the
face defines what they share and imports none of them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = ["Check", "Status", "agent", "cameras", "config_verdict", "host", "mcp_servers", "memory", "mqtt", "remote",
           "worst"]

Status = Literal["ok", "warn", "fail", "skip"]


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def worst(checks: list[Check]) -> Status:
    for status in ("fail", "warn"):
        if any(c.status == status for c in checks):
            return status
    return "ok"
