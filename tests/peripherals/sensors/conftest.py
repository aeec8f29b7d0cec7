"""Fake /sys and /proc trees, laid out as the kernel lays them out, for the sysfs sensors."""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def w1_slave(reading: str) -> str:
    """The kernel's w1_slave text for ``reading`` (see :meth:`FakeSysfs.ds18b20`)."""
    if reading == "zeros":
        return ("00 00 00 00 00 00 00 00 00 : crc=00 YES\n"
                "00 00 00 00 00 00 00 00 00 t=0\n")
    value, _, verdict = reading.partition(" ")
    return (f"72 01 4b 46 7f ff 0e 10 57 : crc=57 {verdict or 'YES'}\n"
            f"72 01 4b 46 7f ff 0e 10 57 t={value}\n")


def descriptors(path: Path, besides: int = -1) -> int:
    """How many descriptors of this process other than ``besides`` have ``path`` open (a reader
    still waiting in open() has none yet)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += int(fd) != besides and os.readlink(f"/proc/self/fd/{fd}") == str(path)
        except OSError:  # closed meanwhile
            continue
    return count


class FakeSysfs:
    """A root directory with the kernel's files for 1-Wire thermometers and the Pi's health."""

    def __init__(self, root: Path):
        self.root = root
        self.stops: list[Callable[[], object]] = []

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    # 1-Wire ---------------------------------------------------------------------------------

    def w1_bus(self) -> Path:
        devices = self.root / "sys/bus/w1/devices"
        devices.mkdir(parents=True, exist_ok=True)
        (devices / "w1_bus_master1").mkdir(exist_ok=True)
        return devices

    def ds18b20(self, device: str, reading: str = "23125") -> Path:
        """A thermometer whose w1_slave always shows ``reading``: ``"23125"`` (millidegrees,
        CRC good), ``"23125 NO"`` (CRC failed) or ``"zeros"`` (nobody answered)."""
        return self.write(f"sys/bus/w1/devices/{device}/w1_slave", w1_slave(reading))

    def ds18b20_sequence(self, device: str, *readings: str) -> list[str]:
        """A thermometer whose w1_slave shows the next of ``readings`` at each read, as the
        kernel runs a new conversion for each (a FIFO served by a thread); the last one
        repeats. Returns the readings served so far."""
        fifo = self.w1_bus() / device / "w1_slave"
        fifo.parent.mkdir(exist_ok=True)
        os.mkfifo(fifo)
        served: list[str] = []
        stop = threading.Event()

        def serve() -> None:
            while not stop.is_set():
                try:
                    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                except OSError as exc:  # ENXIO: no reader yet
                    if exc.errno != errno.ENXIO:
                        raise
                    time.sleep(0.001)
                    continue
                reading = readings[min(len(served), len(readings) - 1)]
                served.append(reading)
                os.set_blocking(fd, True)
                os.write(fd, w1_slave(reading).encode())
                # the reader cannot see EOF before this end closes, so its descriptor shows up;
                # once it is gone again, the next reader is a new read, not this one's tail
                while not descriptors(fifo, besides=fd) and not stop.is_set():
                    time.sleep(0.001)
                os.close(fd)
                while descriptors(fifo) and not stop.is_set():
                    time.sleep(0.001)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        self.stops.append(lambda: (stop.set(), thread.join(5)))
        return served

    # the kernel's dht11 IIO driver (dtoverlay=dht11,gpiopin=N) -------------------------------

    IIO = "sys/bus/iio/devices"

    def dht11(self, device: str = "iio:device0", *, millidegrees: int | str = 21300,
              millipercent: int | str = 64500, gpio: int = 4) -> Path:
        """An IIO device as the dht11 driver makes it (``name`` is ``dht11@<gpio>``); a value of
        ``"EIO"`` makes that file fail its read with EIO, as the driver does on a garbled frame."""
        folder = self.root / self.IIO / device
        self.write(f"{self.IIO}/{device}/name", f"dht11@{gpio}\n")
        for file, value in (("in_temp_input", millidegrees),
                            ("in_humidityrelative_input", millipercent)):
            self.dht11_value(device, file, value)
        return folder

    def dht11_value(self, device: str, file: str, value: int | str) -> None:
        path = self.root / self.IIO / device / file
        path.unlink(missing_ok=True)
        if value == "EIO":
            path.symlink_to("/proc/self/mem")  # reading it from offset 0 is a real EIO
        else:
            path.write_text(f"{value}\n")

    # the Pi's health --------------------------------------------------------------------------

    def pi(self, *, millidegrees: int = 48312, throttled: str | None = "50005",
           loadavg: str = "0.52 0.58 0.59 1/389 12345\n",
           mem_total_kb: int = 3884328, mem_available_kb: int = 2913246) -> None:
        self.write("sys/class/thermal/thermal_zone0/temp", f"{millidegrees}\n")
        if throttled is not None:
            self.write("sys/devices/platform/soc/soc:firmware/get_throttled", f"{throttled}\n")
        self.write("proc/loadavg", loadavg)
        self.write("proc/meminfo", f"MemTotal:       {mem_total_kb} kB\n"
                                   "MemFree:          412100 kB\n"
                                   f"MemAvailable:   {mem_available_kb} kB\n"
                                   "Buffers:          100412 kB\n")


@pytest.fixture
def sysfs(tmp_path: Path) -> Iterator[FakeSysfs]:
    fake = FakeSysfs(tmp_path / "root")
    fake.root.mkdir()
    yield fake
    for stop in fake.stops:
        stop()
