"""The Raspberry Pi's own health: CPU temperature, throttling and under-voltage, load, disk and
memory use, from the kernel's files (under ``root``, so tests give a fake tree).

Throttling comes from ``vcgencmd get_throttled`` where the command is present, else from the
firmware driver's sysfs node; its bits mean:

>>> flags = decode_throttled(0x50005)
>>> [name for name, on in flags.items() if on]
['under_voltage', 'throttled', 'under_voltage_occurred', 'throttled_occurred']

On a machine that is not a Pi some sources are missing: the sensor announces (``present``) only
the quantities whose sources exist when it is built (a file's presence, nothing read or run),
while ``units`` keeps every quantity the type yields, so rules written for a Pi pass their check
anywhere; a read returns what it could measure, and each source that fails is logged once.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

from peripherals.exc import SensorError
from peripherals.sensors.base import Reading, Sensor, SensorContext, SensorOptions, SensorSpec

log = logging.getLogger(__name__)

THERMAL_ZONE = "sys/class/thermal/thermal_zone0/temp"
THROTTLED_NODE = "sys/devices/platform/soc/soc:firmware/get_throttled"
LOADAVG, MEMINFO = "proc/loadavg", "proc/meminfo"

THROTTLE_BITS = {
    "under_voltage": 0, "freq_capped": 1, "throttled": 2, "soft_temp_limit": 3,
    "under_voltage_occurred": 16, "freq_capped_occurred": 17, "throttled_occurred": 18,
    "soft_temp_limit_occurred": 19,
}
"""Flag -> bit of the Pi's get_throttled. ``freq_capped`` is the ARM frequency cap, ``soft_temp_limit``
the soft temperature limit (60 °C by default on a Pi 3B+); ``*_occurred`` stay set until
reboot. Each flag reads 1 or 0."""

UNITS: dict[str, str] = {
    "cpu_temperature": "°C",
    **{flag: "" for flag in THROTTLE_BITS},
    "load_1m": "", "load_5m": "", "load_15m": "",
    "disk_used": "%",
    "memory_used": "%",
}


LABELS: dict[str, str] = {
    "cpu_temperature": "CPU temperature",
    "under_voltage": "under-voltage", "freq_capped": "frequency capped",
    "throttled": "throttled", "soft_temp_limit": "soft temperature limit",
    "under_voltage_occurred": "under-voltage occurred",
    "freq_capped_occurred": "frequency capped occurred",
    "throttled_occurred": "throttled occurred",
    "soft_temp_limit_occurred": "soft temperature limit occurred",
    "load_1m": "load (1 min)", "load_5m": "load (5 min)", "load_15m": "load (15 min)",
    "disk_used": "disk used", "memory_used": "memory used",
}
"""Each quantity in words, for people (Home Assistant's entity names)."""


def decode_throttled(value: int) -> dict[str, bool]:
    """The get_throttled bit field as named flags."""
    return {flag: bool(value >> bit & 1) for flag, bit in THROTTLE_BITS.items()}


def parse_throttled(text: str) -> int:
    """``throttled=0x50005`` (vcgencmd) or ``50005`` (sysfs, hex without 0x) -> the bit field.

    >>> parse_throttled("throttled=0x50005\\n"), parse_throttled("50005\\n")
    (327685, 327685)
    """
    return int(text.strip().rpartition("=")[2], 16)


class PiHealthSensor(Sensor):
    """The Pi itself, as a sensor named ``name`` (rules say ``pi.cpu_temperature > 75``).

    ``vcgencmd`` is the command's path; ``"auto"`` looks it up on PATH when ``root`` is the
    real one (a fake tree in tests never runs the host's command); ``None`` never uses it."""

    kind = "pi"

    def __init__(self, name: str, *, root: str | Path = "/", vcgencmd: str | None = "auto"):
        self.name, self.root = name, Path(root)
        if vcgencmd == "auto":
            vcgencmd = shutil.which("vcgencmd") if self.root == Path("/") else None
        self.vcgencmd = vcgencmd
        self.units = dict(UNITS)
        self._here = {q: UNITS[q] for q in self._present()}
        self._reported: set[str] = set()

    def _present(self) -> list[str]:
        """The quantities whose sources exist (checked once, by their files' presence)."""
        def there(relative: str) -> bool:
            return (self.root / relative).is_file()

        found = ["cpu_temperature"] if there(THERMAL_ZONE) else []
        if self.vcgencmd or there(THROTTLED_NODE):
            found += list(THROTTLE_BITS)
        if there(LOADAVG):
            found += ["load_1m", "load_5m", "load_15m"]
        if self.root.is_dir():
            found.append("disk_used")
        if there(MEMINFO):
            found.append("memory_used")
        return found

    @property
    def present(self) -> dict[str, str]:
        """Only what this machine has sources for."""
        return self._here

    def describe(self) -> str:
        return "pi health" + (f" (root {self.root})" if self.root != Path("/") else "")

    def read(self) -> dict[str, Reading]:
        values: dict[str, float] = {}
        for source, method in (("thermal zone", self._temperature), ("throttling", self._throttling),
                               ("load", self._load), ("disk", self._disk),
                               ("memory", self._memory)):
            try:
                values.update(method())
            except (OSError, ValueError, SensorError) as exc:
                self._missing(source, exc)
        if not values:
            raise SensorError(f"none of the Pi's health sources could be read under {self.root} "
                              "(the agent is not on Linux, or /proc and /sys are not mounted)")
        return {q: Reading(q, v, UNITS[q]) for q, v in values.items()}

    def _missing(self, source: str, exc: Exception, level: int = logging.WARNING) -> None:
        if source not in self._reported:
            self._reported.add(source)
            log.log(level, "sensor_source_unavailable sensor=%s source=%r error=%r", self.name,
                    source, str(exc))

    def _text(self, relative: str) -> str:
        return (self.root / relative).read_text()

    def _temperature(self) -> dict[str, float]:
        return {"cpu_temperature": int(self._text(THERMAL_ZONE).strip()) / 1000.0}

    def _throttling(self) -> dict[str, float]:
        return {flag: float(on) for flag, on in decode_throttled(self._throttled_bits()).items()}

    def _throttled_bits(self) -> int:
        if self.vcgencmd:
            try:
                done = subprocess.run([self.vcgencmd, "get_throttled"], capture_output=True,
                                      text=True, timeout=5, check=True)
                return parse_throttled(done.stdout)
            except (OSError, subprocess.SubprocessError, ValueError) as exc:
                # the firmware node says the same (the service's device sandbox has no /dev/vcio)
                self._missing("vcgencmd", exc, logging.INFO)
        try:
            return parse_throttled(self._text(THROTTLED_NODE))
        except FileNotFoundError:
            raise SensorError("no throttling flags: vcgencmd failed or is missing and "
                              f"/{THROTTLED_NODE} does not exist (not a Raspberry Pi, or a kernel "
                              "without the raspberrypi firmware driver)") from None

    def _load(self) -> dict[str, float]:
        one, five, fifteen = self._text(LOADAVG).split()[:3]
        return {"load_1m": float(one), "load_5m": float(five), "load_15m": float(fifteen)}

    def _disk(self) -> dict[str, float]:
        fs = os.statvfs(self.root)
        used = fs.f_blocks - fs.f_bfree
        usable = used + fs.f_bavail  # as df counts: blocks reserved for root are not usable
        return {"disk_used": round(100.0 * used / usable, 1) if usable else 0.0}

    def _memory(self) -> dict[str, float]:
        fields = {}
        for line in self._text(MEMINFO).splitlines():
            key, _, rest = line.partition(":")
            if rest.split():
                fields[key] = int(rest.split()[0])
        total, available = fields["MemTotal"], fields["MemAvailable"]
        return {"memory_used": round(100.0 * (total - available) / total, 1)}


class PiHealthOptions(SensorOptions):
    """The Pi's own health: cpu_temperature, the throttling flags (under_voltage, throttled,
    freq_capped, soft_temp_limit and their *_occurred), load_1m/5m/15m, disk_used, memory_used."""

    @property
    def units(self) -> dict[str, str]:
        return dict(UNITS)


def _build(name: str, options: PiHealthOptions, context: SensorContext) -> Sensor:
    return PiHealthSensor(name, root=context.root)


SPEC = SensorSpec("pi", PiHealthOptions, _build)
