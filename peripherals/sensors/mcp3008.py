"""Microchip MCP3008 10-bit SPI ADC through gpiozero's own ``MCP3008`` class.

gpiozero speaks SPI over the pin factory it is given: the kernel's spidev for the hardware
port (``port``/``device``: SPI0 CE0 or CE1; ``pip install spidev`` and SPI enabled), else bit
banging on the GPIO pins (a ``select_pin`` other than CE0/CE1, or the mock factory in tests).
A reading is ``value * vref`` volts, where value is gpiozero's 0..1 (``(2 * code + 1) / 2047``
for the 10-bit code), then ``* scale + offset`` in ``unit``; ``vref = 1`` gives the bare
fraction.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Self

from pydantic import Field, model_validator

from peripherals.base import DeviceNode
from peripherals.exc import SensorError, SensorUnavailable
from peripherals.sensors.base import VOLTS, Reading, ScaledOptions, Scaling, Sensor, SensorContext, SensorSpec

log = logging.getLogger(__name__)

CHANNELS = tuple(range(8))
ENABLE_SPI = ("enable SPI with `sudo raspi-config nonint do_spi 0` (or dtparam=spi=on in "
              "/boot/firmware/config.txt), reboot, and `pip install spidev` in the agent's "
              "environment")


class Mcp3008Sensor(Sensor):
    """Channel ``channel`` (0..7) of an MCP3008 on SPI ``port``/``device``, or with its chip
    select on ``select_pin`` (a gpiozero pin name; clock, MOSI and MISO stay GPIO11/10/9).
    ``pin_factory`` is the header's gpiozero pin factory (None: gpiozero's default)."""

    kind = "mcp3008"

    def __init__(self, name: str, channel: int, *, port: int = 0, device: int = 0,
                 select_pin: str | None = None, vref: float = 3.3,
                 scaling: Scaling = VOLTS, pin_factory: Any = None):
        if channel not in CHANNELS:
            raise ValueError(f"MCP3008 channels are 0..7, not {channel}")
        if vref <= 0:
            raise ValueError(f"vref must be above 0 V, not {vref}")
        self.name, self.channel, self.vref, self.scaling = name, channel, vref, scaling
        self.spi: dict[str, Any] = ({"select_pin": select_pin} if select_pin is not None
                                    else {"port": port, "device": device})
        self.units = {scaling.quantity: scaling.unit}
        self.pin_factory = pin_factory
        self._adc: Any = None

    def describe(self) -> str:
        where = (f"chip select {self.spi['select_pin']}" if "select_pin" in self.spi
                 else f"SPI{self.spi['port']} CE{self.spi['device']}")
        return f"mcp3008 channel {self.channel} on {where}"

    def read(self) -> dict[str, Reading]:
        adc = self._adc or self._open()
        try:
            fraction = float(adc.value)
        except Exception as exc:  # noqa: BLE001 - spidev and the pin libraries raise their own
            self.close()
            raise SensorError(f"reading the MCP3008 ({self.describe()}) failed: {exc}; check "
                              "the wiring (CLK, DIN, DOUT, CS, 3.3 V on VDD and VREF)") from None
        reading = self.scaling.reading(fraction * self.vref)
        return {reading.quantity: reading}

    def _open(self) -> Any:
        from gpiozero import MCP3008, Device  # gpiozero's SPI stack: imported only when used
        from gpiozero.exc import GPIOPinInUse

        if Device.pin_factory is None and self.pin_factory is not None:
            # gpiozero 2.0's bit-banged SPI bus builds itself without the caller's factory
            # (SPISoftwareBus calls Device.__init__() bare) and would load a second, default
            # one, or fail where none loads: it gets ours
            Device.pin_factory = self.pin_factory
        try:
            self._adc = MCP3008(channel=self.channel, max_voltage=self.vref,
                                pin_factory=self.pin_factory, **self.spi)
        except GPIOPinInUse as exc:
            raise SensorUnavailable(f"the MCP3008's SPI pins are in use ({exc}): remove GPIO8-11 "
                                    "(and the select pin) from the gpio board's pins") from None
        except (OSError, ImportError) as exc:
            raise SensorUnavailable(f"cannot open SPI for the MCP3008 ({exc}): {ENABLE_SPI}") from None
        except Exception as exc:  # noqa: BLE001 - gpiozero's pin factories raise their own
            raise SensorUnavailable(f"cannot set up the MCP3008 ({self.describe()}): {exc}") from None
        log.debug("sensor_opened sensor=%s chip=mcp3008 where=%r", self.name, self.describe())
        return self._adc

    def close(self) -> None:
        if self._adc is not None:
            adc, self._adc = self._adc, None
            adc.close()


class Mcp3008Options(ScaledOptions):
    """One channel of an MCP3008 SPI ADC: ``value * vref`` volts, then scale/offset."""

    channel: int = Field(ge=0, le=7)
    port: int = Field(default=0, ge=0, le=1)
    device: int = Field(default=0, ge=0, le=1)
    """Hardware SPI: port 0, chip select CE0 (GPIO8) or CE1 (GPIO7)."""
    select_pin: str | None = None
    """Instead of port/device: chip select on this GPIO (bit-banged SPI on GPIO11/10/9)."""
    vref: float = Field(default=3.3, gt=0)
    """The voltage on VREF; 1 gives the bare fraction 0..1."""

    @model_validator(mode="after")
    def check(self) -> Self:
        if self.select_pin is not None and {"port", "device"} & self.model_fields_set:
            raise ValueError("select_pin and port/device both choose the chip select; keep one")
        return self


def _build(name: str, options: Mcp3008Options, context: SensorContext) -> Sensor:
    return Mcp3008Sensor(name, options.channel, port=options.port, device=options.device,
                         select_pin=options.select_pin, vref=options.vref,
                         scaling=options.scaling, pin_factory=context.pin_factory)


def _devices(options: Mcp3008Options) -> Sequence[DeviceNode]:
    """The kernel's spidev for hardware SPI; bit-banged SPI rides on the header's pins."""
    if options.select_pin is not None:
        return ()
    return (DeviceNode(f"/dev/spidev{options.port}.{options.device}", "spi", ENABLE_SPI),)


SPEC = SensorSpec("mcp3008", Mcp3008Options, _build, _devices)
