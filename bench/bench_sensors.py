"""The first sensors people buy, on their simulated sources: what one read costs (a DHT22 in a
fake IIO tree, an SHT3x and an AHT20 on a loopback I2C bus, whose datasheet waits are most of it,
an HC-SR04 on gpiozero's mock pins, whose pings every 60 ms are), and what the pulse counter
spends on each pulse of a flow meter (gpiozero's edge callback and our count) against a bare
input with no callback: the headroom over a YF-S201 at 30 L/min (225 pulses/s)."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gpiozero import DigitalInputDevice
from gpiozero.pins.mock import MockFactory

from bench.process import percentile, row
from peripherals.sensors.aht20 import Aht20Sensor
from peripherals.sensors.dht22 import Dht22Sensor
from peripherals.sensors.hcsr04 import Hcsr04Sensor
from peripherals.sensors.pulse_counter import PulseCounterSensor
from peripherals.sensors.sht3x import Sht3xSensor
from tests.peripherals.sensors.chips import Aht20Chip, LoopbackBus, Sht3xChip
from tests.peripherals.sensors.echo_pins import EchoPin, TriggerPin

PULSES = 20_000
FLOW_METER_HZ = 225.0


def read_times(read: Callable[[], object], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        read()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def reads() -> None:
    print("one read on its simulated source (ms)")
    with tempfile.TemporaryDirectory() as tmp:
        device = Path(tmp) / "iio:device0"
        device.mkdir()
        (device / "name").write_text("dht11@4\n")
        (device / "in_temp_input").write_text("21300\n")
        (device / "in_humidityrelative_input").write_text("64500\n")
        dht = Dht22Sensor("air", iio_root=tmp, retry_seconds=0)
        figures = {"dht22 (sysfs files)": read_times(dht.read, 500)}
    sht = Sht3xSensor("bench", open_bus=LoopbackBus({0x44: Sht3xChip()}).open)
    figures["sht3x (16 ms conversion wait)"] = read_times(sht.read, 20)
    aht = Aht20Sensor("shelf", open_bus=LoopbackBus({0x38: Aht20Chip(calibrated=True)}).open)
    figures["aht20 (80 ms conversion wait)"] = read_times(aht.read, 10)
    factory = MockFactory()
    trigger = factory.pin(23, pin_class=TriggerPin, echo_pin=factory.pin(24, pin_class=EchoPin))
    trigger.distance = 80.0
    sonar = Hcsr04Sensor("tank", echo_pin="GPIO24", trigger_pin="GPIO23", pin_factory=factory)
    figures["hcsr04 (5 pings, 60 ms apart)"] = read_times(sonar.read, 5)
    for label, samples in figures.items():
        row(label, f"p50 {statistics.median(samples):.2f}", ratio=f"max {max(samples):.2f}")


def edges(factory: MockFactory, pin: int, count: int) -> list[float]:
    line = factory.pin(pin)
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        line.drive_low()
        line.drive_high()
        samples.append((time.perf_counter() - start) * 1e6)
    return samples


def pulse_cost() -> None:
    factory = MockFactory()
    bare = DigitalInputDevice("GPIO5", pull_up=True, pin_factory=factory)
    baseline = edges(factory, 5, PULSES)
    bare.close()
    meter = PulseCounterSensor("water", pin="GPIO17", pulses_per_litre=450, pin_factory=factory)
    meter.read()
    counted = edges(factory, 17, PULSES)
    assert meter.read()["water"].value == round(PULSES / 450, 3)
    meter.close()
    print(f"a flow meter's pulse, {PULSES} pulses on a mock pin (µs a pulse)")
    row("a bare input, no callback", f"p50 {statistics.median(baseline):.1f}",
        ratio=f"p99 {percentile(baseline, 0.99):.1f}")
    p50, p99 = statistics.median(counted), percentile(counted, 0.99)
    row("counted by the pulse counter", f"p50 {p50:.1f}", ratio=f"p99 {p99:.1f}")
    row("our own cost a pulse", f"{p50 - statistics.median(baseline):+.1f}")
    row("pulses/s the counter keeps up with (p99)", f"{1e6 / p99:,.0f}",
        target=f"a YF-S201 at 30 L/min: {FLOW_METER_HZ:.0f}")


def main() -> None:
    reads()
    pulse_cost()


if __name__ == "__main__":
    main()
