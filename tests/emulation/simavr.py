"""An Arduino firmware (ours as ELF, or a stock build as Intel hex) in our simavr front end
(firmware/simavr), its UART on a pseudo-terminal reached through a per-test symlink, output-pin
edges read from the front end's stdout.

Like a real Uno, the emulated one resets when the host opens its port (the DTR auto-reset; the
front end's header comment says how it sees the open): each driver that connects restarts the
sketch. ``auto_reset=False`` (or :meth:`set_auto_reset`) is a board with auto-reset disabled."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path


class SimAvr:
    def __init__(self, emulator: Path, elf: Path | None, workdir: Path, boot: Path | None = None,
                 auto_reset: bool = True):
        """``elf``: the firmware, ELF or Intel ``.hex``; ``auto_reset``: reset when the port opens."""
        self.emulator, self.elf, self.boot = emulator, elf, boot
        self.auto_reset = auto_reset
        self.sketch = "edge"
        """Which firmware runs: ``edge`` (ours) or ``stock`` (StandardFirmata)."""

        self.link = workdir / "ttyUNO"
        self.proc: subprocess.Popen[str] | None = None
        self.edges: list[tuple[str, int, float]] = []
        """(pin, level, host monotonic time) for every output-pin change."""
        self.pin_reports: list[tuple[str, int, int]] = []
        """(pin, level, simulated microseconds: the emulated CPU's cycle count) for every
        output-pin change, in the order the emulated CPU made them, across all pins (one
        simulation thread writes the reports): what a logic analyser on the header would see."""
        self.resets: list[float] = []
        """Host monotonic time of every reset on open."""
        self._acks: list[str] = []

    def start(self, run: bool = True) -> None:
        """Launch; with ``run=False`` the CPU waits for :meth:`run` (a flashing tool that must
        open the port before the bootloader's timeout starts)."""
        args = [str(self.emulator), "--link", str(self.link)]
        if self.boot:
            args += ["--boot", str(self.boot)]
        if not self.auto_reset:
            args.append("--no-autoreset")
        if self.elf:
            args.append(str(self.elf))
        self.edges, self.resets, self._acks, self.pin_reports = [], [], [], []
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        for line in self.proc.stdout:  # simavr's own chatter comes first
            if line.startswith("pty "):
                break
        else:
            raise RuntimeError("avr-emulator exited before opening its pty")
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        if run:
            self.run()

    def run(self) -> None:
        self.command("start")

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            words = line.split()
            if words[:1] == ["edge"]:
                self.pin_reports.append((words[1], int(words[2]), int(words[3])))
                self.edges.append((words[1], int(words[2]), time.monotonic()))
            elif words[:1] == ["reset"]:
                self.resets.append(time.monotonic())
            elif words[:1] == ["ok"]:
                self._acks.append(words[1])

    def command(self, text: str) -> None:
        count = len(self._acks)
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + 5
        while len(self._acks) <= count:
            assert time.monotonic() < deadline, f"avr-emulator did not take {text!r}"
            time.sleep(0.002)

    def set_auto_reset(self, on: bool) -> None:
        """Restore or cut the reset on open, as the Uno's RESET-EN solder bridge does."""
        self.auto_reset = on
        self.command(f"autoreset {int(on)}")

    def drive(self, pin: str, level: int) -> None:
        self.command(f"pin {pin} {level}")

    def set_adc(self, pin: str, millivolts: int) -> None:
        self.command(f"adc {pin} {millivolts}")

    def levels(self, pin: str) -> list[int]:
        return [level for name, level, _ in self.edges if name == pin]

    def wait_edge(self, pin: str, level: int, after: int = 0, timeout: float = 5.0) -> float:
        """Host time of the first ``pin`` edge to ``level`` past the first ``after`` edges."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = [e for e in self.edges if e[0] == pin][after:]
            for _, value, at in seen:
                if value == level:
                    return at
            time.sleep(0.002)
        raise AssertionError(f"{pin} never went to {level}: edges {self.levels(pin)}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None
