"""The Pi's health from a fake /sys and /proc: CPU temperature, get_throttled decoded (from
vcgencmd where it works, else the firmware's sysfs node), load, disk and memory use; on a machine
without some sources, what can be measured is."""

from __future__ import annotations

import logging
import os
import stat

import pytest

from peripherals.exc import SensorError
from peripherals.sensors.pi_health import UNITS, PiHealthSensor, decode_throttled


def values(sensor: PiHealthSensor) -> dict[str, float]:
    return {q: r.value for q, r in sensor.read().items()}


def fake_vcgencmd(tmp_path, script: str) -> str:
    path = tmp_path / "vcgencmd"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_every_quantity_from_a_pi(sysfs):
    sysfs.pi(millidegrees=48312, throttled="50005")
    sensor = PiHealthSensor("pi", root=sysfs.root)
    got = values(sensor)
    assert set(got) == set(UNITS) == set(sensor.quantities)
    assert got["cpu_temperature"] == 48.312
    assert (got["load_1m"], got["load_5m"], got["load_15m"]) == (0.52, 0.58, 0.59)
    assert got["memory_used"] == 25.0  # (3884328 - 2913246) / 3884328
    fs = os.statvfs(sysfs.root)
    used = fs.f_blocks - fs.f_bfree
    assert got["disk_used"] == pytest.approx(100 * used / (used + fs.f_bavail), abs=0.1)
    assert sensor.read()["cpu_temperature"].unit == "°C" and sensor.read()["disk_used"].unit == "%"


def test_throttling_flags_are_decoded_from_the_firmware_node(sysfs):
    sysfs.pi(throttled="50005")  # under-voltage now, throttled now, both have occurred
    got = values(PiHealthSensor("pi", root=sysfs.root))
    assert {flag for flag in decode_throttled(0) if got[flag]} == {
        "under_voltage", "throttled", "under_voltage_occurred", "throttled_occurred"}
    sysfs.pi(throttled="0")
    assert not any(values(PiHealthSensor("pi", root=sysfs.root))[f] for f in decode_throttled(0))


@pytest.mark.parametrize("bits,flags", [
    (0x1, {"under_voltage"}),
    (0x2, {"freq_capped"}),
    (0x4, {"throttled"}),
    (0x8, {"soft_temp_limit"}),
    (0x10000, {"under_voltage_occurred"}),
    (0x20000, {"freq_capped_occurred"}),
    (0x40000, {"throttled_occurred"}),
    (0x80000, {"soft_temp_limit_occurred"}),
    (0xE0000, {"freq_capped_occurred", "throttled_occurred", "soft_temp_limit_occurred"}),
])
def test_each_bit_of_get_throttled(bits, flags):
    assert {flag for flag, on in decode_throttled(bits).items() if on} == flags


def test_vcgencmd_is_asked_first_where_it_works(sysfs, tmp_path):
    sysfs.pi(throttled="0")
    vcgencmd = fake_vcgencmd(tmp_path, 'echo "throttled=0x80008"')
    got = values(PiHealthSensor("pi", root=sysfs.root, vcgencmd=vcgencmd))
    assert got["soft_temp_limit"] == 1 and got["soft_temp_limit_occurred"] == 1


def test_a_failing_vcgencmd_falls_back_to_the_firmware_node(sysfs, tmp_path, caplog):
    sysfs.pi(throttled="1")
    vcgencmd = fake_vcgencmd(tmp_path, 'echo "VCHI initialization failed" >&2; exit 255')
    with caplog.at_level(logging.INFO, logger="peripherals.sensors.pi_health"):
        got = values(PiHealthSensor("pi", root=sysfs.root, vcgencmd=vcgencmd))
    assert got["under_voltage"] == 1
    assert "sensor_source_unavailable sensor=pi source='vcgencmd'" in caplog.text


def test_without_the_pis_sources_the_rest_is_measured_and_the_gap_logged_once(sysfs, caplog):
    sysfs.pi(throttled=None)
    (sysfs.root / "sys/class/thermal/thermal_zone0/temp").unlink()
    sensor = PiHealthSensor("pi", root=sysfs.root, vcgencmd=None)
    with caplog.at_level(logging.WARNING, logger="peripherals.sensors.pi_health"):
        first, second = values(sensor), values(sensor)
    assert set(first) == set(second) == {"load_1m", "load_5m", "load_15m", "disk_used", "memory_used"}
    assert caplog.text.count("source='throttling'") == 1
    assert caplog.text.count("source='thermal zone'") == 1
    assert "not a Raspberry Pi, or a kernel without the raspberrypi firmware driver" in caplog.text


def test_nothing_readable_at_all_is_an_error(tmp_path):
    with pytest.raises(SensorError, match="none of the Pi's health sources could be read"):
        PiHealthSensor("pi", root=tmp_path / "missing", vcgencmd=None).read()


def test_a_fake_root_never_runs_the_hosts_vcgencmd(sysfs):
    assert PiHealthSensor("pi", root=sysfs.root).vcgencmd is None


def test_only_what_this_machine_can_read_is_announced(sysfs):
    """A quantity without a source here (no thermal zone, no throttling flags: not a Pi) is not
    among what the sensor has present, so it is never announced to stay unknown for ever; its
    units keep every quantity, so rules written for a Pi still pass their check here."""
    sysfs.pi(throttled=None)
    (sysfs.root / "sys/class/thermal/thermal_zone0/temp").unlink()
    sensor = PiHealthSensor("pi", root=sysfs.root, vcgencmd=None)
    assert set(sensor.present) == {"load_1m", "load_5m", "load_15m", "disk_used", "memory_used"}
    assert set(values(sensor)) == set(sensor.present)
    assert set(sensor.units) == set(UNITS)
    everything = PiHealthSensor("pi", root=sysfs.root, vcgencmd="/usr/bin/vcgencmd")
    assert set(decode_throttled(0)) <= set(everything.present)  # a vcgencmd to ask: flags too
    sysfs.pi()
    assert set(PiHealthSensor("pi", root=sysfs.root, vcgencmd=None).present) == set(UNITS)


def test_every_quantity_has_words():
    from peripherals.sensors.pi_health import LABELS

    assert set(LABELS) == set(UNITS)
    assert LABELS["cpu_temperature"] == "CPU temperature"
    assert not [words for words in LABELS.values() if "_" in words]
