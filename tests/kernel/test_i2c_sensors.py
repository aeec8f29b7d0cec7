"""The I2C sensor drivers on a real kernel SMBus: ``i2c-stub`` emulates a BME280 at 0x76 and an
ADS1115 at 0x48 behind ``/dev/i2c-N`` (i2c-dev is loaded at boot), their registers filled with
smbus2 the way a chip holds them; the drivers then read them through smbus2 and the kernel.

i2c-stub keeps what is written and returns it: the BME280's status reads 0 (not measuring), so
the data registers hold the raw values written before; the ADS1115's config register reads back
with OS set (conversion done) and its conversion register holds the code written before. What
this proves is the real path: ioctls, byte/word/block transfers, byte order and errno.

Python in the guest is slow (a process takes seconds), so one process reads everything and
reports it as JSON; the tests then check its parts.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from peripherals.sensors.bme280 import compensate_humidity, compensate_temperature
from tests.kernel.guest import PROJECT, PYTHON, KernelGuest
from tests.peripherals.sensors.chips import ADC_H, ADC_T, DATASHEET

BME280, ADS1115, ABSENT = 0x76, 0x48, 0x77
ADS_CODE = 0x2000  # 1.024 V at the 4.096 V range

READ_EVERYTHING = textwrap.dedent(f"""
    import glob, json, sys
    sys.path.insert(0, {str(PROJECT)!r})
    from smbus2 import SMBus
    from peripherals.exc import SensorError
    from peripherals.sensors.factory import create_sensor
    from peripherals.sensors.i2c import swap16
    from tests.peripherals.sensors.chips import bme280_data, bme280_registers

    stub = [path.split("/")[-2] for path in glob.glob("/sys/class/i2c-dev/i2c-*/name")
            if open(path).read().strip() == "SMBus stub driver"]
    number = int(stub[0].split("-")[1])
    out = {{"bus": number}}

    def attempt(key, read):
        try:
            out[key] = {{q: [r.value, r.unit] for q, r in read().items()}}
        except SensorError as exc:
            out[key] = {{"error": type(exc).__name__, "message": str(exc)}}

    if sys.argv[1] == "fill":
        with SMBus(number) as bus:
            for register, value in {{**bme280_registers(), **bme280_data()}}.items():
                bus.write_byte_data({BME280}, register, value)
            bus.write_word_data({ADS1115}, 0x00, swap16({ADS_CODE}))
        bme = create_sensor("greenhouse", "bme280", {{"bus": number, "address": {BME280}}})
        attempt("bme280", bme.read)
        attempt("bme280_again", bme.read)
        bme.close()
        ads = create_sensor("soil", "ads1115", {{
            "channel": 3, "bus": number, "address": {ADS1115}, "fsr": 4.096, "data_rate": 860,
            "scale": 2.0, "offset": 1.0, "quantity": "level", "unit": "cm"}})
        attempt("ads1115", ads.read)
        ads.close()
        with SMBus(number) as bus:
            out["bme280_ctrl"] = [bus.read_byte_data({BME280}, r) for r in (0xF2, 0xF4, 0xF5)]
            out["ads1115_config"] = swap16(bus.read_word_data({ADS1115}, 0x01))
        attempt("absent", create_sensor("nobody", "bme280",
                                        {{"bus": number, "address": {ABSENT}}}).read)
        attempt("no_bus", create_sensor("nowhere", "bme280",
                                        {{"bus": number + 7, "address": {BME280}}}).read)
    else:
        attempt("unprivileged", create_sensor("greenhouse", "bme280",
                                              {{"bus": number, "address": {BME280}}}).read)
    print(json.dumps(out))
""")


def run_in_guest(guest: KernelGuest, mode: str, user: int | None = None) -> dict:
    result = guest.run([str(PYTHON), "-c", READ_EVERYTHING, mode], cwd=str(PROJECT), user=user,
                       timeout=120)
    assert result["rc"] == 0, result
    return json.loads(result["stdout"])


@pytest.fixture(scope="module")
def i2c_stub(kernel_guest: KernelGuest) -> KernelGuest:
    """i2c-stub loaded with a chip at 0x76 and one at 0x48 (once per guest)."""
    if not kernel_guest.request("glob", pattern="/sys/module/i2c_stub")["paths"]:
        loaded = kernel_guest.run(["busybox", "insmod", "/run/modules/i2c_stub.ko",
                                   f"chip_addr=0x{BME280:02x},0x{ADS1115:02x}"])
        assert loaded["rc"] == 0, loaded
    return kernel_guest


@pytest.fixture(scope="module")
def seen(i2c_stub: KernelGuest) -> dict:
    """What the drivers read in the guest, after the chips' registers were filled."""
    return run_in_guest(i2c_stub, "fill")


def test_the_stub_is_a_real_i2c_dev_bus(i2c_stub, seen):
    assert i2c_stub.request("glob", pattern=f"/dev/i2c-{seen['bus']}")["paths"]


def test_the_bme280_is_identified_calibrated_and_compensated_through_the_kernel(seen):
    celsius, t_fine = compensate_temperature(DATASHEET, ADC_T)
    assert seen["bme280"] == {
        "temperature": [25.08, "°C"],
        "pressure": [1006.53, "hPa"],
        "humidity": [round(compensate_humidity(DATASHEET, ADC_H, t_fine), 2), "%"],
    }
    assert seen["bme280_again"] == seen["bme280"]


def test_the_bme280_driver_wrote_forced_mode_with_humidity_oversampling(seen):
    ctrl_hum, ctrl_meas, config = seen["bme280_ctrl"]
    assert (ctrl_hum, ctrl_meas, config) == (0b001, 0b001_001_01, 0x00)


def test_the_ads1115_converts_in_volts_then_scales(seen):
    assert seen["ads1115"] == {"level": [1.024 * 2.0 + 1.0, "cm"]}


def test_the_ads1115_config_word_went_over_the_wire_most_significant_byte_first(seen):
    config = seen["ads1115_config"]
    assert config >> 15 == 1  # start a conversion
    assert (config >> 12) & 0b111 == 0b111  # AIN3 against GND
    assert (config >> 9) & 0b111 == 0b001  # 4.096 V
    assert (config >> 5) & 0b111 == 0b111  # 860 samples per second
    assert config & 0b1_0000_0011 == 0b1_0000_0011  # single shot, comparator off


def test_an_address_where_nothing_answers_says_to_check_wiring_and_address(seen):
    assert seen["absent"]["error"] == "SensorError"
    assert seen["absent"]["message"].startswith(f"no answer from 0x77 on /dev/i2c-{seen['bus']}")
    assert f"i2cdetect -y {seen['bus']}" in seen["absent"]["message"]


def test_a_bus_that_does_not_exist_says_to_enable_i2c(seen):
    assert seen["no_bus"]["error"] == "SensorUnavailable"
    assert f"no /dev/i2c-{seen['bus'] + 7}: enable I2C" in seen["no_bus"]["message"]


def test_a_user_without_access_to_the_bus_is_told_to_join_the_i2c_group(i2c_stub, seen):
    i2c_stub.chmod("/root", 0o755)  # the venv's interpreter may live under /root (pyenv)
    unprivileged = run_in_guest(i2c_stub, "unprivileged", user=65534)["unprivileged"]
    assert unprivileged["error"] == "SensorUnavailable"
    assert unprivileged["message"].startswith(f"permission denied on /dev/i2c-{seen['bus']}: add "
                                              "the agent's user to the i2c group")
