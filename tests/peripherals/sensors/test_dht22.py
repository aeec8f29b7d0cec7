"""DHT22 through the kernel's dht11 IIO driver, on a fake IIO tree laid out as the driver makes
it: millidegrees and milli-percent, the EIO the driver returns for a garbled frame (a real EIO:
the file is /proc/self/mem), retries within one poll, and errors that say what to do."""

from __future__ import annotations

import logging

import pytest

from peripherals.exc import SensorError, SensorUnavailable
from peripherals.sensors.dht22 import Dht22Sensor
from peripherals.sensors.factory import create_sensor

IIO = "sys/bus/iio/devices"


def sensor_in(sysfs, **options) -> Dht22Sensor:
    built = create_sensor("air", "dht22", {"retry_seconds": 0, **options}, root=sysfs.root)
    assert isinstance(built, Dht22Sensor)
    return built


class FixesTheDevice(logging.Handler):
    """When the driver logs a retry, the next frame arrives whole (as the DHT22's next reply
    does): the retry is answered by the event, not by a time."""

    def __init__(self, sysfs, after: int):
        super().__init__()
        self.sysfs, self.after, self.retries = sysfs, after, 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("sensor_retry"):
            self.retries += 1
            if self.retries == self.after:
                self.sysfs.dht11_value("iio:device0", "in_temp_input", 19800)


@pytest.fixture
def retries(sysfs, caplog):
    caplog.set_level(logging.INFO, logger="peripherals.sensors.dht22")
    logger = logging.getLogger("peripherals.sensors.dht22")
    handlers = []

    def watch(after: int) -> FixesTheDevice:
        handler = FixesTheDevice(sysfs, after)
        logger.addHandler(handler)
        handlers.append(handler)
        return handler

    yield watch
    for handler in handlers:
        logger.removeHandler(handler)


def test_reads_millidegrees_and_milli_percent(sysfs):
    sysfs.dht11(millidegrees=21300, millipercent=64500)
    readings = sensor_in(sysfs).read()
    assert (readings["temperature"].value, readings["temperature"].unit) == (21.3, "°C")
    assert (readings["humidity"].value, readings["humidity"].unit) == (64.5, "%")


def test_below_zero(sysfs):
    sysfs.dht11(millidegrees=-7500, millipercent=91000)
    assert sensor_in(sysfs).read()["temperature"].value == -7.5


def test_the_driver_failing_with_eio_is_retried_within_the_poll(sysfs, retries):
    sysfs.dht11(millidegrees="EIO")
    watch = retries(after=2)
    readings = sensor_in(sysfs, attempts=3).read()
    assert readings["temperature"].value == 19.8
    assert watch.retries == 2


def test_every_try_failing_is_a_sensor_error_naming_the_wiring(sysfs, retries):
    sysfs.dht11(millipercent="EIO")
    watch = retries(after=99)
    with pytest.raises(SensorError, match=r"DHT22 iio:device0: no good reading in 3 tries "
                                          r"\(last: a garbled reply \(Input/output error\)\); "
                                          r"check the wiring: data to the overlay's GPIO"):
        sensor_in(sysfs).read()
    assert watch.retries == 3


def test_a_value_outside_what_a_dht22_measures_is_retried_then_refused(sysfs):
    sysfs.dht11(millipercent=250000)
    with pytest.raises(SensorError, match="250 % are outside what a DHT22 measures"):
        sensor_in(sysfs, attempts=2).read()


def test_without_the_overlay_it_says_which_line_to_add(sysfs):
    with pytest.raises(SensorUnavailable, match=r"is missing\): add dtoverlay=dht11,gpiopin=N"):
        sensor_in(sysfs).read()
    sysfs.write(f"{IIO}/iio:device0/name", "ads1015\n")  # another IIO device only
    with pytest.raises(SensorUnavailable, match="no dht11 device under .*add dtoverlay=dht11"):
        sensor_in(sysfs).read()


def test_the_only_dht11_device_is_found_among_other_iio_devices(sysfs):
    sysfs.write(f"{IIO}/iio:device0/name", "ads1015\n")
    sysfs.dht11("iio:device1", millidegrees=25000)
    sensor = sensor_in(sysfs)
    assert sensor.read()["temperature"].value == 25.0
    assert sensor.describe() == "dht22 iio:device1"


def test_two_sensors_need_their_device_named(sysfs):
    sysfs.dht11("iio:device0", gpio=4)
    sysfs.dht11("iio:device1", gpio=17, millidegrees=30000)
    with pytest.raises(SensorUnavailable, match=r"several dht11 devices \(iio:device0, "
                                                r"iio:device1\): set device = \"iio:deviceN\""):
        sensor_in(sysfs).read()
    assert sensor_in(sysfs, device="iio:device1").read()["temperature"].value == 30.0
    with pytest.raises(SensorError, match=r"iio:device7 is not a dht11 IIO device \(found: "
                                          r"iio:device0, iio:device1\)"):
        sensor_in(sysfs, device="iio:device7").read()


def test_a_device_that_goes_away_is_looked_for_again(sysfs):
    folder = sysfs.dht11()
    sensor = sensor_in(sysfs)
    sensor.read()
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    with pytest.raises(SensorError, match="iio:device0 is gone"):
        sensor.read()
    sysfs.dht11("iio:device2", millidegrees=22000)
    assert sensor.read()["temperature"].value == 22.0


def test_the_iio_root_is_an_option_under_the_agents_root(sysfs):
    sysfs.dht11()
    moved = sysfs.root / "elsewhere"
    (sysfs.root / IIO).rename(moved)
    assert sensor_in(sysfs, iio_root="/elsewhere").read()["humidity"].value == 64.5
    with pytest.raises(ValueError, match="device"):
        create_sensor("air", "dht22", {"device": "/dev/iio:device0"})
