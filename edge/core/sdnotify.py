"""systemd's sd_notify protocol in pure Python, and a watchdog that pings from the event loop.

The protocol is one datagram per notification on the AF_UNIX socket named by ``$NOTIFY_SOCKET``
(a leading ``@`` means Linux's abstract namespace), carrying newline-separated ``KEY=VALUE`` lines:
``READY=1``, ``STATUS=...``, ``WATCHDOG=1``, ``STOPPING=1``. Outside systemd every call is a no-op.

The watchdog ping is scheduled with ``loop.call_later`` rather than from a thread: if the event
loop hangs, the pings stop, systemd's ``WatchdogSec`` expires, and the service is restarted.

>>> notifier = Notifier(env={})          # not under systemd
>>> notifier.enabled, notifier.notify(ready=True)
(False, False)
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger(__name__)


def _socket_address(raw: str) -> str | bytes | None:
    if not raw:
        return None
    if raw.startswith("@"):
        return b"\0" + raw[1:].encode()
    if raw.startswith("/"):
        return raw
    return None  # vsock addresses (vsock:CID:PORT) are for VMs, not this agent


def watchdog_interval(env: Mapping[str, str] = os.environ) -> float | None:
    """The watchdog timeout in seconds that systemd asks this process to honour, else None.

    ``WATCHDOG_PID``, when set, must be this process: a child must not ping for its parent.
    """
    usec = env.get("WATCHDOG_USEC", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    pid = env.get("WATCHDOG_PID", "")
    if pid and pid != str(os.getpid()):
        return None
    return int(usec) / 1_000_000


class Notifier:
    """Sends notifications to systemd; ``enabled`` is False when not started with Type=notify."""

    def __init__(self, env: Mapping[str, str] = os.environ):
        self.address = _socket_address(env.get("NOTIFY_SOCKET", ""))
        self._sock: socket.socket | None = None

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, *, ready: bool = False, status: str | None = None, watchdog: bool = False,
               stopping: bool = False) -> bool:
        """Send one datagram with the given fields; True if it was delivered."""
        lines = []
        if ready:
            lines.append("READY=1")
        if stopping:
            lines.append("STOPPING=1")
        if watchdog:
            lines.append("WATCHDOG=1")
        if status is not None:
            lines.append("STATUS=" + status.replace("\n", " ")[:200])
        if not lines or self.address is None:
            return False
        if self._sock is None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        try:
            self._sock.sendto("\n".join(lines).encode(), self.address)
        except OSError as exc:
            log.warning("sd_notify_failed socket=%r error=%r", self.address, exc)
            return False
        return True

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class LoopWatchdog:
    """Pings ``WATCHDOG=1`` every half timeout, from callbacks on the running event loop."""

    def __init__(self, notifier: Notifier, timeout_seconds: float):
        self.notifier = notifier
        self.period = timeout_seconds / 2
        self._handle: asyncio.TimerHandle | None = None
        self.pings = 0

    def start(self) -> None:
        self._ping()

    def _ping(self) -> None:
        if self.notifier.notify(watchdog=True):
            self.pings += 1
        self._handle = asyncio.get_running_loop().call_later(self.period, self._ping)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class ServiceNotifier:
    """What the runtime calls: ready, status, stopping, and the watchdog's lifetime."""

    def __init__(self, env: Mapping[str, str] = os.environ):
        self.notifier = Notifier(env)
        timeout = watchdog_interval(env) if self.notifier.enabled else None
        self.watchdog = LoopWatchdog(self.notifier, timeout) if timeout else None

    def ready(self, status: str) -> None:
        self.notifier.notify(ready=True, status=status)
        if self.watchdog:
            self.watchdog.start()
            log.info("watchdog_started period=%gs", self.watchdog.period)

    def status(self, text: str) -> None:
        self.notifier.notify(status=text)

    def stopping(self, reason: str) -> None:
        if self.watchdog:
            self.watchdog.stop()
        self.notifier.notify(stopping=True, status=f"stopping: {reason}")

    def close(self) -> None:
        if self.watchdog:
            self.watchdog.stop()
        self.notifier.close()
