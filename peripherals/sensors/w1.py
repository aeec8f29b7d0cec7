"""DS18B20 temperature sensors on the kernel's 1-Wire bus (``/sys/bus/w1/devices/28-*``).

Each read makes the kernel start a conversion (about 0.75 s) and returns its scratchpad. The
``w1_slave`` file shows the CRC verdict; a reading whose CRC failed, a scratchpad of zeros (no
sensor answering) and 85.000 °C (the power-on value: the conversion did not happen, usually a
weak supply in parasite mode) are rejected, retried once, then reported as a SensorError.
Kernels whose w1_slave is missing have ``temperature`` (millidegrees; the kernel checks the CRC
and fails the read when it is wrong).

>>> parse_w1_slave("72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\\n"
...                "72 01 4b 46 7f ff 0e 10 57 t=23125\\n")
23.125
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from peripherals.exc import SensorError, SensorUnavailable
from peripherals.sensors.base import Reading, Sensor, SensorContext, SensorOptions, SensorSpec

log = logging.getLogger(__name__)

DEVICES = "sys/bus/w1/devices"
FAMILY = "28-"
POWER_ON_MILLIDEGREES = 85000
UNITS = {"temperature": "°C"}

ENABLE_W1 = ("enable 1-Wire: add dtoverlay=w1-gpio to /boot/firmware/config.txt (data on GPIO4; "
             "dtoverlay=w1-gpio,gpiopin=N for another pin) or use `sudo raspi-config` > Interface "
             "Options > 1-Wire, then reboot")
CHECK_WIRING = ("check the wiring: data to the 1-Wire GPIO (GPIO4 by default) with a 4.7 kΩ "
                "pull-up to 3.3 V, VDD to 3.3 V, GND to GND")

_CRC = re.compile(r"crc=[0-9a-f]{2} (YES|NO)\s*$", re.M)
_T = re.compile(r"t=(-?\d+)\s*$", re.M)
_DEVICE = re.compile(r"28-[0-9a-f]{12}")


class ImplausibleReading(SensorError):
    """A scratchpad that arrived but cannot be trusted (bad CRC, zeros, the power-on value);
    worth one more try."""


def parse_w1_slave(text: str) -> float:
    """Degrees Celsius from a ``w1_slave`` file; ImplausibleReading when it cannot be trusted."""
    crc, value = _CRC.search(text), _T.search(text)
    if crc is None or value is None:
        raise ImplausibleReading(f"unexpected w1_slave contents {text.strip()!r}")
    if crc.group(1) != "YES":
        raise ImplausibleReading(f"CRC check failed ({text.splitlines()[0].strip()}): noise on "
                                 f"the data line; {CHECK_WIRING}, and keep long cables away from "
                                 "mains wiring")
    if set(text.split(":")[0].split()) == {"00"}:
        raise ImplausibleReading(f"the sensor answered with zeros (no sensor on the line?); "
                                 f"{CHECK_WIRING}")
    return _plausible(int(value.group(1)))


def _plausible(millidegrees: int) -> float:
    if millidegrees == POWER_ON_MILLIDEGREES:
        raise ImplausibleReading("85.000 °C is the DS18B20's power-on value: the conversion did "
                                 "not run (in parasite mode the supply is too weak; wire VDD to "
                                 "3.3 V)")
    return millidegrees / 1000.0


def find_devices(root: str | Path = "/") -> list[str]:
    """The DS18B20 ids on the bus (``28-...``), sorted; SensorUnavailable when 1-Wire is off."""
    devices = Path(root) / DEVICES
    if not devices.is_dir():
        raise SensorUnavailable(f"no 1-Wire bus ({devices} is missing): {ENABLE_W1}")
    return sorted(p.name for p in devices.iterdir() if p.name.startswith(FAMILY))


class Ds18b20Sensor(Sensor):
    """One DS18B20: ``device`` (``28-0123456789ab``), or the only one on the bus when omitted.

    >>> Ds18b20Sensor("water", root="/nonexistent").read()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    peripherals.exc.SensorUnavailable: no 1-Wire bus (/nonexistent/sys/bus/w1/devices is missing): enable 1-Wire: ...
    """

    kind = "ds18b20"

    def __init__(self, name: str, device: str | None = None, *, root: str | Path = "/"):
        self.name, self.device, self.root = name, device, Path(root)
        self.units = dict(UNITS)
        self._found: str | None = None

    def describe(self) -> str:
        return f"ds18b20 {self._found or self.device or '(the only one on the bus)'}"

    def read(self) -> dict[str, Reading]:
        device = self._resolve()
        try:
            celsius = self._read_once(device)
        except ImplausibleReading as first:
            log.info("sensor_retry sensor=%s device=%s reason=%r", self.name, device, str(first))
            try:
                celsius = self._read_once(device)
            except ImplausibleReading as second:
                raise SensorError(f"DS18B20 {device}: {second} (twice in a row)") from None
        return {"temperature": Reading("temperature", celsius, "°C")}

    def _resolve(self) -> str:
        if self._found is not None and (self.root / DEVICES / self._found).exists():
            return self._found
        self._found = None
        present = find_devices(self.root)
        if self.device is not None:
            if self.device not in present:
                listed = ", ".join(present) or "none"
                raise SensorError(f"DS18B20 {self.device} is not on the 1-Wire bus (found: "
                                  f"{listed}); {CHECK_WIRING}, or correct device = in the config")
            self._found = self.device
        elif not present:
            raise SensorError(f"no DS18B20 on the 1-Wire bus; {CHECK_WIRING}")
        elif len(present) > 1:
            raise SensorUnavailable(f"several DS18B20 on the 1-Wire bus ({', '.join(present)}): "
                                    "set device = \"28-...\" for this sensor (one sensor section "
                                    "for each)")
        else:
            self._found = present[0]
        return self._found

    def _read_once(self, device: str) -> float:
        folder = self.root / DEVICES / device
        try:
            if (folder / "w1_slave").exists():
                return parse_w1_slave((folder / "w1_slave").read_text())
            text = (folder / "temperature").read_text()
        except FileNotFoundError:
            self._found = None
            raise SensorError(f"DS18B20 {device} left the 1-Wire bus; {CHECK_WIRING}") from None
        except OSError as exc:  # the kernel fails the read when the CRC is wrong
            raise ImplausibleReading(f"the kernel could not read it ({exc.strerror}): "
                                     f"{CHECK_WIRING}") from None
        try:
            return _plausible(int(text.strip()))
        except ValueError:
            raise ImplausibleReading(f"unexpected temperature contents {text.strip()!r}") from None


def _device_id(device: str | None) -> str | None:
    if device is not None and not _DEVICE.fullmatch(device):
        raise ValueError(f"{device!r} is not a DS18B20 id: 28- and 12 hex digits, as "
                         "`ls /sys/bus/w1/devices` shows")
    return device


class Ds18b20Options(SensorOptions):
    """A DS18B20 on the 1-Wire bus (dtoverlay=w1-gpio): yields temperature (°C)."""

    device: Annotated[str | None, AfterValidator(_device_id)] = None
    """Its id in /sys/bus/w1/devices (``28-0123456789ab``); omitted: the only one there."""

    @property
    def units(self) -> dict[str, str]:
        return dict(UNITS)


def _build(name: str, options: Ds18b20Options, context: SensorContext) -> Sensor:
    return Ds18b20Sensor(name, options.device, root=context.root)


SPEC = SensorSpec("ds18b20", Ds18b20Options, _build)
