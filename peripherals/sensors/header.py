"""Sensors wired straight to the Pi's header pins (an HC-SR04's echo and trigger, a flow meter's
pulse line), set up as gpiozero devices on the header's pin factory. Their pins are the
sensor's: a pin the gpio board allowlists as well is refused when the sensor opens."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from pydantic import Field

from peripherals.exc import SensorUnavailable

PinName = Annotated[str, Field(pattern=r"^[A-Za-z0-9:]+$")]
"""A header pin as gpiozero names it: ``GPIO17``, ``BCM17``, ``BOARD11`` or ``17``."""

DeviceT = TypeVar("DeviceT")


def open_on_header(make: Callable[[], DeviceT], what: str, pins: str) -> DeviceT:
    """``make()``, a gpiozero device on header pins; a SensorUnavailable saying what to change
    when a pin is taken or the pin factory cannot drive it."""
    from gpiozero.exc import GPIOPinInUse  # gpiozero: imported where a device is opened

    try:
        return make()
    except GPIOPinInUse as exc:
        raise SensorUnavailable(f"{what}: a pin is in use ({exc}): remove {pins} from the gpio "
                                "board's pins (a sensor's pins belong to the sensor)") from None
    except Exception as exc:  # noqa: BLE001 - gpiozero's pin factories raise their own
        raise SensorUnavailable(f"cannot set up {what} on {pins}: {exc}") from None
