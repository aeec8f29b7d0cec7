"""The sensors people buy first, in a running agent's automation: a DHT22 in a fake IIO tree and
a flow meter's pulses on the same mock header as the relays, read by the hub and acted on by
rules (the fan above 80 % humidity, the pump off after a litre), and a sensor's pin the gpio
board holds refused with the fix."""

from __future__ import annotations

from edge.automation.assembly import Automation
from edge.config.loader import load_config
from edge.hardware import build_hardware
from tests.helpers import asker, until

CONFIG = """
[boards.gpio.aliases]
fan = "GPIO23"
pump = "GPIO22"
[boards.gpio.pins]
fan = { mode = "output", safe = "off" }
pump = { mode = "output", safe = "off" }
[sensors.air]
type = "dht22"
retry_seconds = 0
interval_seconds = 0.05
[sensors.irrigation]
type = "pulse_counter"
pin = "GPIO17"
pulses_per_litre = 450
interval_seconds = 0.05
[[rules]]
name = "damp"
when = "air.humidity > 80"
cooldown_seconds = 0
then = "gpio write fan on"
[[rules]]
name = "a-litre"
when = "irrigation.water >= 1"
cooldown_seconds = 0
then = "gpio write pump off"
"""


def dht11(root, millidegrees: int, millipercent: int) -> None:
    folder = root / "sys/bus/iio/devices/iio:device0"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "name").write_text("dht11@4\n")
    (folder / "in_temp_input").write_text(f"{millidegrees}\n")
    (folder / "in_humidityrelative_input").write_text(f"{millipercent}\n")


async def test_a_dht22_and_a_flow_meter_drive_rules(tmp_path, write_config, isolated_env,
                                                    mock_factory):
    dht11(tmp_path, 24500, 62000)
    cfg = load_config(str(write_config(CONFIG)), env=isolated_env).config
    hw = build_hardware(cfg, resident=True, pin_factory=mock_factory)
    auto = Automation(cfg, hw, pin_factory=mock_factory, sensor_root=tmp_path)
    await hw.start()
    await auto.start({}, {}, dict)
    fan, pump, meter = mock_factory.pin(23), mock_factory.pin(22), mock_factory.pin(17)
    try:
        await until(lambda: auto.sensors.latest().get("irrigation"))
        assert auto.sensors.latest()["air"]["temperature"].value == 24.5
        await hw.write("pump", True, asker("cli:me"))
        for _ in range(450):  # a litre through the meter
            meter.drive_low()
            meter.drive_high()
        await until(lambda: pump.state == 0)
        assert auto.sensors.latest()["irrigation"]["water"].value == 1.0
        assert fan.state == 0
        dht11(tmp_path, 24500, 86500)
        await until(lambda: fan.state == 1)
    finally:
        await auto.aclose()
        await hw.shutdown()


async def test_a_pin_the_gpio_board_holds_fails_the_sensor_with_the_fix(
        tmp_path, write_config, isolated_env, mock_factory):
    text = CONFIG.replace('pin = "GPIO17"', 'pin = "GPIO22"')
    cfg = load_config(str(write_config(text)), env=isolated_env).config
    hw = build_hardware(cfg, resident=True, pin_factory=mock_factory)
    auto = Automation(cfg, hw, pin_factory=mock_factory, sensor_root=tmp_path)
    await hw.start()
    await auto.start({}, {}, dict)
    try:
        rows = await until(lambda: [r for r in auto.status()["sensors"]
                                    if r["name"] == "irrigation" and r["error"]])
        assert "remove GPIO22 from the gpio board's pins" in rows[0]["error"]
    finally:
        await auto.aclose()
        await hw.shutdown()
