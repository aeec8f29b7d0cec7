"""MCP3008 through gpiozero's own class on gpiozero's mock pin factory: an emulated chip (the
mock SPI device gpiozero provides for this) answers on the SPI pins, gpiozero bit-bangs the
protocol, and the sensor turns the 10-bit result into volts, then scale/offset."""

from __future__ import annotations

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockSPIDevice

from peripherals.exc import SensorUnavailable
from peripherals.sensors.base import Reading, Scaling
from peripherals.sensors.mcp3008 import Mcp3008Sensor

CLOCK, MOSI, MISO, CE0, CE1 = 11, 10, 9, 8, 7


class EmulatedMcp3008(MockSPIDevice):
    """The chip's side of the protocol (datasheet figure 6-1): a start bit, single/differential,
    three channel bits, then a sample bit, a null bit and the 10-bit result, most significant bit
    first."""

    def __init__(self, select_pin: int, *, vref: float = 3.3, pin_factory=None):
        super().__init__(CLOCK, MOSI, MISO, select_pin, pin_factory=pin_factory)
        self.vref, self.inputs, self.conversions = vref, [0.0] * 8, []
        self.state = "idle"

    def on_start(self) -> None:
        super().on_start()
        self.state = "idle"

    def on_bit(self) -> None:
        if self.state == "idle" and self.rx_buf[-1]:
            self.state, self.rx_buf = "mode", []
        elif self.state == "mode":
            self.state, self.rx_buf = ("single" if self.rx_buf[-1] else "differential"), []
        elif self.state in ("single", "differential") and len(self.rx_buf) == 3:
            channel = self.rx_word()
            self.conversions.append((self.state, channel))
            volts = min(max(self.inputs[channel], 0.0), self.vref)
            self.tx_word(min(1023, int(volts / self.vref * 1024)), 12)  # sample, null, 10 bits
            self.state = "result"


@pytest.fixture(autouse=True)
def _no_default_factory_leaks(monkeypatch):
    """The driver hands gpiozero's software SPI bus our factory as the default; undo it."""
    monkeypatch.setattr(Device, "pin_factory", None)


@pytest.fixture
def mock_factory():
    """gpiozero's mock factory with plain mock pins (the SPI pins are subclasses of them)."""
    factory = MockFactory()
    yield factory
    factory.reset()


@pytest.fixture
def chip(mock_factory):
    device = EmulatedMcp3008(CE0, pin_factory=mock_factory)
    yield device
    device.close()


def adc(mock_factory, channel: int, **options) -> Mcp3008Sensor:
    return Mcp3008Sensor("light", channel, pin_factory=mock_factory, **options)


def test_a_channel_reads_in_volts_through_gpiozero(mock_factory, chip):
    chip.inputs[3] = 1.65
    sensor = adc(mock_factory, 3)
    reading = sensor.read()["voltage"]
    assert reading.unit == "V" and reading.value == pytest.approx(1.65, abs=3.3 / 1024)
    assert chip.conversions == [("single", 3)]
    assert sensor.describe() == "mcp3008 channel 3 on SPI0 CE0"
    sensor.close()


def test_vref_1_gives_the_bare_fraction_and_scaling_applies(mock_factory, chip):
    chip.inputs[0] = 3.3 * 0.42
    fraction = adc(mock_factory, 0, vref=1.0, scaling=Scaling(quantity="value", unit=""))
    assert fraction.read()["value"].value == pytest.approx(0.42, abs=1 / 1024)
    fraction.close()
    lm35 = adc(mock_factory, 0, scaling=Scaling(scale=100, quantity="temperature", unit="°C"))
    chip.inputs[0] = 0.213
    assert lm35.read() == {"temperature": Reading("temperature", pytest.approx(21.3, abs=0.33), "°C")}
    lm35.close()


def test_a_chip_select_on_another_pin(mock_factory):
    device = EmulatedMcp3008(5, pin_factory=mock_factory)
    device.inputs[7] = 3.3
    sensor = adc(mock_factory, 7, select_pin="GPIO5")
    assert sensor.read()["voltage"].value == pytest.approx(3.3)  # code 1023: gpiozero's 1.0
    assert sensor.describe() == "mcp3008 channel 7 on chip select GPIO5"
    sensor.close()
    device.close()


def test_close_releases_the_pins_and_a_later_read_opens_them_again(mock_factory, chip):
    sensor = adc(mock_factory, 1)
    sensor.read()
    sensor.close()
    assert sensor.read()["voltage"].value == pytest.approx(0.0, abs=3.3 / 2047)  # half a step
    sensor.close()


def test_pins_taken_by_someone_else_say_which(mock_factory):
    from gpiozero import DigitalOutputDevice

    taken = DigitalOutputDevice(CE0, pin_factory=mock_factory)  # e.g. allowlisted on the gpio board
    with pytest.raises(SensorUnavailable, match="SPI pins are in use"):
        adc(mock_factory, 0).read()
    taken.close()


def test_channels_are_0_to_7():
    with pytest.raises(ValueError, match="channels are 0..7, not 8"):
        Mcp3008Sensor("light", 8)
