"""The STM32 firmware in qemu's netduinoplus2, its USART1 on a loopback TCP port.

qemu models neither GPIO nor RCC: every register write lands in the unimplemented-device log
(``-d unimp``), which is how tests observe pin levels (BSRR writes)."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path

BSRR = re.compile(r"GPIO([A-K]): unimplemented device write \(size 4, offset 0x018, value 0x([0-9a-f]+)\)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class QemuStm32:
    def __init__(self, elf: Path, workdir: Path):
        self.elf, self.workdir = elf, workdir
        self.tcp_port = free_port()
        self.url = f"socket://127.0.0.1:{self.tcp_port}"
        self.log = workdir / "qemu-unimp.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Listen on the port; the machine starts when the host connects (wait=on), so nothing
        the firmware sends is lost. nodelay: without it Nagle and delayed ACKs add 40 ms a reply."""
        self.log.write_text("")
        self.proc = subprocess.Popen(
            ["qemu-system-arm", "-M", "netduinoplus2", "-display", "none", "-monitor", "none",
             "-serial", f"tcp:127.0.0.1:{self.tcp_port},server=on,wait=on,nodelay=on",
             "-kernel", str(self.elf), "-d", "unimp", "-D", str(self.log)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.stderr.read().decode() if self.proc.stderr else ""
            if self._listening():
                return
            time.sleep(0.02)
        raise TimeoutError("qemu did not open its serial port")

    def _listening(self) -> bool:
        """From /proc/net/tcp: connecting to check would start the machine early."""
        wanted = f":{self.tcp_port:04X} "
        with open("/proc/net/tcp") as table:
            return any(wanted in line and line.split()[3] == "0A" for line in table)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def pin_writes(self, pin: str) -> list[int]:
        """Levels written to ``pin`` (``PA5``) through BSRR, in order."""
        port, index = pin[1], int(pin[2:])
        levels = []
        for match in BSRR.finditer(self.log.read_text()):
            if match.group(1) != port:
                continue
            value = int(match.group(2), 16)
            if value & (1 << index):
                levels.append(1)
            elif value & (1 << (index + 16)):
                levels.append(0)
        return levels

    def wait_level(self, pin: str, level: int, timeout: float = 5.0, after: int = 0) -> list[int]:
        """Wait until a write to ``pin`` with ``level`` shows up past the first ``after`` writes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            writes = self.pin_writes(pin)
            if level in writes[after:]:
                return writes
            time.sleep(0.02)
        raise AssertionError(f"{pin} never went to {level}: writes {self.pin_writes(pin)}")
