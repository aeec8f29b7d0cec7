"""How a sensor's quantity is shown in Home Assistant: its component, ``device_class``,
``state_class``, ``entity_category`` and name, following Home Assistant's own rules for sensors
(``homeassistant/components/sensor/const.py``: the units each device class takes, and the state
classes it allows).

A quantity gets a device class only with a unit Home Assistant accepts for it (it rejects the
entity otherwise); its state class is the one that device class allows: a meter that only counts
up (energy, gas, water, volume) is ``total_increasing``, what is measured now is
``measurement``, and a class that allows none (a timestamp) gets none.

>>> shown = present("test", "energy", "kWh")
>>> shown.component, shown.keys["device_class"], shown.keys["state_class"]
('sensor', 'energy', 'total_increasing')
>>> present("test", "temperature", "°C").keys["state_class"]
'measurement'

The Pi's health (``type = "pi"``) is the machine's, not the garden's: each of its entities is
``entity_category: diagnostic``; ``cpu_temperature`` is a temperature; the throttling and
under-voltage flags are ``binary_sensor``s with ``device_class: problem`` (on: a problem), with
no statistics kept.

>>> flag = present("pi", "under_voltage", "")
>>> flag.component, flag.keys["device_class"], flag.keys["entity_category"], flag.words
('binary_sensor', 'problem', 'diagnostic', 'under-voltage')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from peripherals.sensors.pi_health import LABELS as PI_LABELS
from peripherals.sensors.pi_health import THROTTLE_BITS

DEVICE_CLASSES: dict[str, tuple[str, frozenset[str]]] = {
    # quantity -> (HA sensor device_class, the units HA accepts for it)
    "temperature": ("temperature", frozenset({"°C", "°F", "K"})),
    "cpu_temperature": ("temperature", frozenset({"°C", "°F", "K"})),
    "humidity": ("humidity", frozenset({"%"})),
    "pressure": ("pressure", frozenset({"Pa", "hPa", "kPa", "bar", "mbar", "mmHg", "inHg",
                                        "psi"})),
    "illuminance": ("illuminance", frozenset({"lx"})),
    "light": ("illuminance", frozenset({"lx"})),
    "voltage": ("voltage", frozenset({"V", "mV"})),
    "current": ("current", frozenset({"A", "mA"})),
    "power": ("power", frozenset({"W", "kW"})),
    "energy": ("energy", frozenset({"Wh", "kWh", "MWh", "MJ", "GJ"})),
    "gas": ("gas", frozenset({"m³", "ft³", "CCF"})),
    "water": ("water", frozenset({"m³", "ft³", "CCF", "gal", "L"})),
    "volume": ("volume", frozenset({"L", "mL", "gal", "m³", "ft³", "CCF"})),
    "co2": ("carbon_dioxide", frozenset({"ppm"})),
    "carbon_dioxide": ("carbon_dioxide", frozenset({"ppm"})),
    "pm25": ("pm25", frozenset({"µg/m³"})),
    "flow_rate": ("volume_flow_rate", frozenset({"L/min", "m³/h", "ft³/min", "gal/min"})),
    "distance": ("distance", frozenset({"mm", "cm", "m", "km", "in", "ft", "yd", "mi"})),
    "moisture": ("moisture", frozenset({"%"})),
    "soil_moisture": ("moisture", frozenset({"%"})),
}
"""Quantities whose name says what they are, and the device class they are shown as (the units
are the ones Home Assistant has accepted for years, so that an older core takes them too)."""

STATE_CLASSES: dict[str, str | None] = {
    "energy": "total_increasing",
    "gas": "total_increasing",
    "water": "total_increasing",
    "volume": "total_increasing",
    "timestamp": None,
    "date": None,
    "enum": None,
    "wind_direction": None,
}
"""Device classes whose state class is not ``measurement``: meters that count up (HA allows
only ``total`` or ``total_increasing`` for them, and the Energy dashboard wants one of them),
and classes that allow no state class at all. Every other device class we claim allows
``measurement``."""

DIAGNOSTIC_KINDS = frozenset({"pi"})
"""Sensor types that describe the machine itself: their entities are diagnostics."""
PROBLEM_FLAGS = {"pi": frozenset(THROTTLE_BITS)}
"""Per sensor type, the quantities that are on/off problem flags (1: a problem)."""
LABELS = {"pi": PI_LABELS}
"""Per sensor type, its quantities in words."""
WORDS = {"co2": "CO2", "pm25": "PM2.5", "pm10": "PM10", "ph": "pH"}
"""Quantities whose words are not their name with spaces for underscores."""


@dataclass(frozen=True)
class Shown:
    component: str
    """``sensor``, or ``binary_sensor`` for a flag."""
    words: str
    """The quantity in words (``CPU temperature``), for the entity's name."""
    keys: dict[str, Any] = field(default_factory=dict)
    """The component's keys for it (device_class, unit_of_measurement, state_class,
    entity_category, payload_on/off)."""


def words(kind: str, quantity: str) -> str:
    """``cpu_temperature`` -> ``CPU temperature``; ``soil_moisture`` -> ``soil moisture``."""
    known = LABELS.get(kind, {}).get(quantity) or WORDS.get(quantity.lower())
    return known or quantity.replace("_", " ").replace("-", " ")


def present(kind: str, quantity: str, unit: str) -> Shown:
    """How quantity ``quantity`` (in ``unit``) of a sensor of type ``kind`` is shown."""
    said = words(kind, quantity)
    keys: dict[str, Any] = {}
    if kind in DIAGNOSTIC_KINDS:
        keys["entity_category"] = "diagnostic"
    if quantity in PROBLEM_FLAGS.get(kind, ()):
        return Shown("binary_sensor", said, keys | {"device_class": "problem",
                                                    "payload_on": "1", "payload_off": "0"})
    if unit:
        keys["unit_of_measurement"] = unit
    device_class, units = DEVICE_CLASSES.get(quantity.lower(), ("", frozenset()))
    if unit not in units:
        device_class = ""  # a plain measurement in its unit
    if device_class:
        keys["device_class"] = device_class
    state_class = STATE_CLASSES.get(device_class, "measurement")
    if state_class is not None:
        keys["state_class"] = state_class
    return Shown("sensor", said, keys)
