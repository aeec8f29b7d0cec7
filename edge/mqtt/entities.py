"""What each kind of pin is on the broker and in Home Assistant: one class per entity kind, as
ESPHome has one per component, registered once below.

A kind says which pins it describes (:meth:`EntityKind.claims`), the keys of its Home Assistant
discovery config (:meth:`~EntityKind.discovery`, on top of the keys every entity shares), what its
state topics carry (:meth:`~EntityKind.state_payloads`) and what a ``<base>/<pin>/set`` payload
asks of the hardware (:meth:`~EntityKind.command`). The topic names, discovery, the bridge and
its commands ask the pin's kind and nothing else.

Outputs are ``switch``es, PWM pins dimmable ``light``s (brightness in percent on the same
``/set`` topic), servos ``number`` sliders (their angle range), inputs ``binary_sensor``s, analog inputs
``sensor``s. Keys follow Home Assistant's documented schema for each component (switch.mqtt,
light.mqtt default schema, number.mqtt, binary_sensor.mqtt, sensor.mqtt);
``tests/mqtt/test_discovery.py`` pins them.

>>> from edge.hardware.pins import Pin
>>> kind = kind_for(Pin("gpio", "GPIO18", PinMode.PWM, aliases=("fan",)), Naming())
>>> kind.name, kind.command("40"), kind.command("off")
('light', Command(action='pwm', value=0.4), Command(action='write', value=0.0))
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from edge.config.mqtt import InputPresentation
from edge.mqtt.commands import OFF, ON, BadPayload, Command, number, shown
from peripherals.base import PinMode

if TYPE_CHECKING:
    from edge.hardware.pins import Pin
    from edge.mqtt.topic_names import Topics


@dataclass(frozen=True)
class Naming:
    """What ``[mqtt]`` says of pins by name: ``servos`` holds the names, aliases and
    ``board:pin`` of the PWM pins that drive servos; ``inputs`` how each input is shown
    (``board:pin`` -> its ``[mqtt.inputs.NAME]``)."""

    servos: frozenset[str] = frozenset()
    inputs: Mapping[str, InputPresentation] = field(default_factory=dict, hash=False,
                                                    compare=False)

    def is_servo(self, pin: Pin) -> bool:
        return bool({pin.pin, f"{pin.board}:{pin.pin}", *pin.aliases} & self.servos)

    def input_options(self, pin: Pin) -> InputPresentation:
        return self.inputs.get(f"{pin.board}:{pin.pin}") or InputPresentation()


class EntityKind(abc.ABC):
    """One kind of pin on the broker. Subclasses set ``name`` and ``component`` and say which
    pins they describe (:meth:`claims`, required); the rest has defaults for an on/off pin."""

    name: ClassVar[str]
    """How the bridge and its logs name the kind (``switch``)."""
    component: ClassVar[str]
    """The Home Assistant component it is discovered as (``switch``, ``number``)."""
    publishes_safe_state: ClassVar[bool] = False
    """At shutdown the bridge publishes the safe level such a pin is about to be driven to."""

    @abc.abstractmethod
    def claims(self, pin: Pin, naming: Naming) -> bool:
        """Whether this kind describes ``pin``."""

    def discovery(self, topics: Topics, slug: str) -> dict[str, Any]:
        """The component's own keys in the pin's discovery config."""
        return {"state_topic": topics.state(slug), "payload_on": "ON", "payload_off": "OFF"}

    def state_payloads(self, topics: Topics, slug: str, value: float) -> dict[str, str]:
        """Topic -> payload for the pin's ``value`` as shown (:meth:`shown_value`)."""
        return {topics.state(slug): "ON" if value > 0 else "OFF"}

    def shown_value(self, pin: Pin, naming: Naming, value: float) -> float:
        """What the pin's logical ``value`` (1/0, a duty 0..1, an angle) is shown as; by
        default the value itself."""
        return value

    def pin_discovery(self, pin: Pin, naming: Naming) -> dict[str, Any]:
        """Discovery keys that depend on the pin and on what ``[mqtt]`` says of it (an input's
        ``device_class``); by default none."""
        return {}

    def command(self, text: str) -> Command:
        """What ``text`` (a ``/set`` payload, stripped) asks; BadPayload says what it takes."""
        word = text.lower()
        if word in ON or word in OFF:
            return Command("write", 1.0 if word in ON else 0.0)
        raise BadPayload(f"this pin takes ON or OFF, not {shown(text)}")


class Switch(EntityKind):
    """An output (a relay): ``ON``/``OFF``."""

    name = component = "switch"
    publishes_safe_state = True

    def claims(self, pin: Pin, naming: Naming) -> bool:
        return pin.mode is PinMode.OUTPUT

    def discovery(self, topics: Topics, slug: str) -> dict[str, Any]:
        return {"command_topic": topics.set(slug), "state_topic": topics.state(slug),
                "payload_on": "ON", "payload_off": "OFF", "state_on": "ON", "state_off": "OFF"}


class Light(EntityKind):
    """A PWM pin: ON/OFF, or a duty in percent (``0`` and ``1`` are percent too)."""

    name = component = "light"
    publishes_safe_state = True

    def claims(self, pin: Pin, naming: Naming) -> bool:
        return pin.mode is PinMode.PWM and not naming.is_servo(pin)

    def discovery(self, topics: Topics, slug: str) -> dict[str, Any]:
        command = topics.set(slug)
        return {"command_topic": command, "state_topic": topics.state(slug),
                "payload_on": "ON", "payload_off": "OFF",
                "brightness_command_topic": command, "brightness_state_topic": topics.duty(slug),
                "brightness_scale": 100, "on_command_type": "brightness"}

    def state_payloads(self, topics: Topics, slug: str, value: float) -> dict[str, str]:
        return {**super().state_payloads(topics, slug, value), topics.duty(slug): str(round(value * 100))}

    def command(self, text: str) -> Command:
        word = text.lower()
        if word in ("0", "1"):
            return Command("pwm", float(word) / 100)
        if word in ON or word in OFF:
            return super().command(text)
        percent = number(text, 0, 100, "a PWM pin takes ON, OFF or a duty from 0 to 100 (percent)")
        return Command("pwm", round(percent / 100, 4))


class Servo(EntityKind):
    """A PWM pin declared in ``[boards.NAME.servos]`` or named in ``[mqtt] servos``: an angle,
    on a slider over the servo's range (0..180 degrees unless its section narrows it)."""

    name = "servo"
    component = "number"

    def claims(self, pin: Pin, naming: Naming) -> bool:
        return pin.mode is PinMode.PWM and (pin.servo_range is not None or naming.is_servo(pin))

    def pin_discovery(self, pin: Pin, naming: Naming) -> dict[str, Any]:
        if pin.servo_range is None:
            return {}
        low, high = pin.servo_range
        return {"min": low, "max": high}

    def shown_value(self, pin: Pin, naming: Naming, value: float) -> float:
        """The angle; NaN (no angle) for a declared servo's value outside its range: one that
        has not been turned yet sends no pulse, and its position is not known."""
        if pin.servo_range is not None and not pin.servo_range[0] <= value <= pin.servo_range[1]:
            return math.nan
        return value

    def discovery(self, topics: Topics, slug: str) -> dict[str, Any]:
        return {"command_topic": topics.set(slug), "state_topic": topics.state(slug), "min": 0,
                "max": 180, "step": 1, "mode": "slider", "unit_of_measurement": "°"}

    def state_payloads(self, topics: Topics, slug: str, value: float) -> dict[str, str]:
        """The angle, or ``None`` (Home Assistant's ``payload_reset``: unknown) for no angle."""
        return {topics.state(slug): "None" if math.isnan(value) else f"{value:g}"}

    def command(self, text: str) -> Command:
        return Command("servo", number(text, 0, 180, "a servo takes an angle from 0 to 180 degrees"))


class BinarySensor(EntityKind):
    """An input, shown as its logical state: ``ON`` while it is on (active: its switch closed, a
    low line with ``pull = "up"``), as everywhere else (:func:`edge.hardware.pins.input_active_low`);
    ``device_class`` says what on means to Home Assistant (``door``: open).

    >>> from edge.hardware.pins import Pin
    >>> button = Pin("gpio", "GPIO27", PinMode.INPUT, aliases=("button",),  # pulled up
    ...              active_low=True)
    >>> kind = BinarySensor()
    >>> kind.shown_value(button, Naming(), 1.0), kind.shown_value(button, Naming(), 0.0)
    (1.0, 0.0)
    """

    name = component = "binary_sensor"

    def claims(self, pin: Pin, naming: Naming) -> bool:
        return pin.mode is PinMode.INPUT

    def shown_value(self, pin: Pin, naming: Naming, value: float) -> float:
        return float(value > 0)

    def pin_discovery(self, pin: Pin, naming: Naming) -> dict[str, Any]:
        device_class = naming.input_options(pin).device_class
        return {"device_class": device_class} if device_class else {}


class Analog(EntityKind):
    """An analog input: a fraction of the reference voltage."""

    name = "analog"
    component = "sensor"

    def claims(self, pin: Pin, naming: Naming) -> bool:
        return pin.mode is PinMode.ANALOG

    def discovery(self, topics: Topics, slug: str) -> dict[str, Any]:
        return {"state_topic": topics.state(slug), "state_class": "measurement"}

    def state_payloads(self, topics: Topics, slug: str, value: float) -> dict[str, str]:
        return {topics.state(slug): f"{value:.3f}"}


KINDS: dict[str, EntityKind] = {}


def register(kind: EntityKind) -> EntityKind:
    """Add a kind; one registered later is asked first, so it may take over pins an earlier one
    would describe."""
    if kind.name in KINDS:
        raise ValueError(f"an MQTT entity kind named {kind.name!r} is registered already")
    KINDS[kind.name] = kind
    return kind


def kind_for(pin: Pin, naming: Naming) -> EntityKind:
    """The kind that describes ``pin`` (the latest registered that claims it)."""
    for kind in reversed(KINDS.values()):
        if kind.claims(pin, naming):
            return kind
    raise LookupError(f"no MQTT entity kind describes {pin.label} ({pin.mode.value})")


register(Switch())
register(Light())
register(Servo())
register(BinarySensor())
register(Analog())


def parse_command(kind: EntityKind, payload: bytes) -> Command:
    """What ``payload`` asks of a pin of ``kind``.

    >>> parse_command(KINDS["switch"], b"on")
    Command(action='write', value=1.0)
    >>> parse_command(KINDS["light"], b"40")
    Command(action='pwm', value=0.4)
    >>> parse_command(KINDS["servo"], b"ninety")
    Traceback (most recent call last):
    ...
    edge.mqtt.commands.BadPayload: a servo takes an angle from 0 to 180 degrees, not 'ninety'
    """
    try:
        text = payload.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise BadPayload("the payload is not UTF-8 text") from None
    return kind.command(text)
