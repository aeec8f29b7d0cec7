"""DHT22/AM2302 (temperature, humidity) through the kernel's ``dht11`` IIO driver, as Raspberry
Pi OS documents it: ``dtoverlay=dht11,gpiopin=4`` in /boot/firmware/config.txt makes an IIO
device (``/sys/bus/iio/devices/iio:deviceN``, named ``dht11@4``) whose ``in_temp_input`` is
millidegrees Celsius and ``in_humidityrelative_input`` milli-percent; the driver tells a DHT22
from a DHT11 by its reply and times the bits in the kernel, so no user-space timing is needed.

The sensor's one-wire protocol is fragile: the driver fails a read with EIO (a bit was missed or
the checksum did not match) or ETIMEDOUT (no answer) often enough that each poll tries up to
``attempts`` times, ``retry_seconds`` apart (the DHT22 measures at most every 2 s), before it
reports a SensorError like the other sensors do.

>>> plausible(23400, 51200)
(23.4, 51.2)
"""

from __future__ import annotations

import errno
import logging
import time
from pathlib import Path

from pydantic import Field

from peripherals.exc import SensorError, SensorUnavailable
from peripherals.sensors.base import Reading, Sensor, SensorContext, SensorOptions, SensorSpec

log = logging.getLogger(__name__)

IIO_DEVICES = "/sys/bus/iio/devices"
DRIVER = "dht11"
UNITS = {"temperature": "°C", "humidity": "%"}
TEMPERATURE, HUMIDITY = "in_temp_input", "in_humidityrelative_input"

ENABLE_DHT = ("add dtoverlay=dht11,gpiopin=N (N: the data pin's GPIO number) to "
              "/boot/firmware/config.txt and reboot")
CHECK_WIRING = ("check the wiring: data to the overlay's GPIO with a 10 kΩ pull-up to 3.3 V "
                "(most modules have one), VCC to 3.3 V, GND to GND, at most a few metres of cable")


class GarbledFrame(SensorError):
    """A DHT22 reply lost or out of range (the driver's EIO or ETIMEDOUT, or numbers it cannot
    have measured); worth another try."""


def plausible(millidegrees: int, millipercent: int) -> tuple[float, float]:
    """(°C, %) from the driver's values; GarbledFrame outside the DHT22's range
    (-40..80 °C, 0..100 %)."""
    celsius, percent = millidegrees / 1000.0, millipercent / 1000.0
    if not -40.0 <= celsius <= 80.0 or not 0.0 <= percent <= 100.0:
        raise GarbledFrame(f"{celsius:g} °C and {percent:g} % are outside what a DHT22 "
                                 "measures")
    return celsius, percent


class Dht22Sensor(Sensor):
    """A DHT22 behind the kernel's dht11 IIO driver: ``device`` (``iio:device0``), or the only
    dht11 device under ``iio_root`` when omitted.

    >>> Dht22Sensor("air", iio_root="/nonexistent").read()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    peripherals.exc.SensorUnavailable: no IIO devices (/nonexistent is missing): add dtoverlay=dht11,...
    """

    kind = "dht22"

    def __init__(self, name: str, device: str | None = None, *,
                 iio_root: str | Path = IIO_DEVICES, attempts: int = 3,
                 retry_seconds: float = 2.0):
        self.name, self.device, self.iio_root = name, device, Path(iio_root)
        self.attempts, self.retry_seconds = attempts, retry_seconds
        self.units = dict(UNITS)
        self._found: str | None = None

    def describe(self) -> str:
        return f"dht22 {self._found or self.device or '(the only dht11 IIO device)'}"

    def read(self) -> dict[str, Reading]:
        device = self._resolve()
        problem = ""
        for attempt in range(1, self.attempts + 1):
            try:
                celsius, percent = self._read_once(device)
            except GarbledFrame as exc:
                problem = str(exc)
            else:
                return {"temperature": Reading("temperature", round(celsius, 2), "°C"),
                        "humidity": Reading("humidity", round(percent, 2), "%")}
            log.info("sensor_retry sensor=%s device=%s attempt=%d reason=%r", self.name, device,
                     attempt, problem)
            if attempt < self.attempts:
                time.sleep(self.retry_seconds)
        raise SensorError(f"DHT22 {device}: no good reading in {self.attempts} tries (last: "
                          f"{problem}); {CHECK_WIRING}")

    def _read_once(self, device: str) -> tuple[float, float]:
        folder = self.iio_root / device
        try:
            millidegrees = int((folder / TEMPERATURE).read_text().strip())
            millipercent = int((folder / HUMIDITY).read_text().strip())
        except FileNotFoundError:
            self._found = None
            raise SensorError(f"DHT22 {device} is gone from {self.iio_root}; {ENABLE_DHT}") from None
        except OSError as exc:  # EIO: a garbled frame; ETIMEDOUT: no answer
            what = "no answer" if exc.errno == errno.ETIMEDOUT else "a garbled reply"
            raise GarbledFrame(f"{what} ({exc.strerror})") from None
        except ValueError:
            raise GarbledFrame("the driver's files hold no number") from None
        return plausible(millidegrees, millipercent)

    def _resolve(self) -> str:
        if self._found is not None:
            return self._found
        if not self.iio_root.is_dir():
            raise SensorUnavailable(f"no IIO devices ({self.iio_root} is missing): {ENABLE_DHT}")
        present = find_devices(self.iio_root)
        if self.device is not None:
            if self.device not in present:
                listed = ", ".join(present) or "none"
                raise SensorError(f"{self.device} is not a dht11 IIO device (found: {listed}); "
                                  f"{ENABLE_DHT}, or correct device = in the config")
            self._found = self.device
        elif not present:
            raise SensorUnavailable(f"no dht11 device under {self.iio_root}: {ENABLE_DHT}")
        elif len(present) > 1:
            raise SensorUnavailable(f"several dht11 devices ({', '.join(present)}): set device = "
                                    "\"iio:deviceN\" for this sensor (`cat /sys/bus/iio/devices/"
                                    "*/name` shows each one's GPIO)")
        else:
            self._found = present[0]
        return self._found


def find_devices(iio_root: Path) -> list[str]:
    """The IIO devices the dht11 driver made (named ``dht11`` or ``dht11@N``), sorted."""
    found = []
    for folder in sorted(iio_root.iterdir()):
        try:
            name = (folder / "name").read_text().strip()
        except OSError:
            continue
        if name.partition("@")[0] == DRIVER:
            found.append(folder.name)
    return found


class Dht22Options(SensorOptions):
    """A DHT22/AM2302 through the kernel's dht11 driver (dtoverlay=dht11,gpiopin=N): yields
    temperature (°C) and humidity (%)."""

    device: str | None = Field(default=None, pattern=r"^iio:device[0-9]+$")
    """Its IIO device (``iio:device0``); omitted: the only dht11 device there."""
    iio_root: str = IIO_DEVICES
    """Where the IIO devices are (under the agent's root; tests give a fake tree)."""
    attempts: int = Field(default=3, ge=1, le=10)
    """Reads tried each poll before it fails (the driver fails one now and then)."""
    retry_seconds: float = Field(default=2.0, ge=0, le=10)
    """Between tries: the DHT22 measures at most every 2 s."""

    @property
    def units(self) -> dict[str, str]:
        return dict(UNITS)


def _build(name: str, options: Dht22Options, context: SensorContext) -> Sensor:
    iio_root = Path(context.root) / options.iio_root.lstrip("/")
    return Dht22Sensor(name, options.device, iio_root=iio_root, attempts=options.attempts,
                       retry_seconds=options.retry_seconds)


SPEC = SensorSpec("dht22", Dht22Options, _build)
