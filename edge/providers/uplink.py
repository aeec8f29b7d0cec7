"""The uplink watch: when the remote endpoint cannot be reached, turns go to the local one.

Where the active endpoint is remote (not on loopback or the LAN: its ``compact`` row is false)
and a local endpoint is configured too, the watch opens a TCP connection to the remote's host
every ``interval`` seconds (10 s; a probe gives up after 5 s, so a loss is noticed within
about 15 s, well inside 30 s). On the first failed probe it switches the agent's
:class:`~edge.providers.switch.ModelSwitch` to the local endpoint and tells the admins once; when
the remote answers again it switches back and says so once. ``/status`` shows the endpoint that
answers (the switch's active one), and the log has ``uplink_down`` / ``uplink_back``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from edge.providers.switch import ModelSwitch

log = logging.getLogger(__name__)

PROBE_INTERVAL_SECONDS = 10.0
PROBE_TIMEOUT_SECONDS = 5.0

Probe = Callable[[str, int], Awaitable[bool]]
Tell = Callable[[str], Awaitable[object]]


async def tcp_probe(host: str, port: int) -> bool:
    """Whether a TCP connection to ``host:port`` opens within the probe timeout."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_SECONDS):
            _, writer = await asyncio.open_connection(host, port)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


def _address(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


class UplinkWatch:
    """Watches the remote endpoint; see the module's docstring."""

    def __init__(self, switch: ModelSwitch, tell: Tell, *,
                 interval: float = PROBE_INTERVAL_SECONDS, probe: Probe = tcp_probe):
        self.switch, self.tell, self.interval, self.probe = switch, tell, interval, probe
        self.remote = switch.active
        self.local = next((name for name, e in switch.endpoints.items()
                           if e.info.get("compact")), None)
        self.down = False

    @property
    def needed(self) -> bool:
        """Whether there is a remote endpoint to watch and a local one to turn to."""
        remote = self.switch.endpoints[self.remote].info
        return self.local is not None and not remote.get("compact")

    async def check(self) -> None:
        """One probe, and the switch (and the one message) when the uplink changed."""
        host, port = _address(str(self.switch.endpoints[self.remote].info["base_url"]))
        reachable = await self.probe(host, port)
        if not reachable and not self.down and self.local is not None:
            self.down = True
            self.switch.select(self.local)
            log.warning("uplink_down remote=%s answering=%s", self.remote, self.local)
            await self.tell(f"The uplink to {self.remote} is down: {self.local} (the local model) "
                            "answers until it is back. Pins, rules and interlocks go on.")
        elif reachable and self.down:
            self.down = False
            self.switch.select(self.remote)
            log.info("uplink_back remote=%s", self.remote)
            await self.tell(f"The uplink to {self.remote} is back: it answers again.")

    async def run(self) -> None:
        while True:
            await self.check()
            await asyncio.sleep(self.interval)
