"""Each allowlisted pin's name and entity kind on the broker (what its states and commands are is
its kind's: :mod:`edge.mqtt.entities`; the node's topic names are :mod:`edge.mqtt.topic_names`).

A pin is named on the broker by its first alias, else its pin name (``led``, ``GPIO22``); when two
boards give the same name, by ``<board>-<name>``. Names keep only letters, digits, ``_`` and ``-``
so that they are valid in topics and as Home Assistant object ids.

>>> from edge.hardware import Pin
>>> from peripherals.base import PinMode
>>> pins = NodePins.build([Pin("gpio", "GPIO17", PinMode.OUTPUT, aliases=("led",))], servos=())
>>> node = Topics("edge-agent/kitchen")
>>> pin = pins.by_slug["led"]
>>> node.set(pin.slug), pin.kind.name, pin.state_payloads(node, 1.0)
('edge-agent/kitchen/led/set', 'switch', {'edge-agent/kitchen/led': 'ON'})

Only the published name is a command topic: the pin's other spellings (``GPIO17``, ``17``,
``BOARD11``, ``gpio:GPIO17``) find nothing, so one pin is one caller on the broker.

>>> node.command_slug("edge-agent/kitchen/led/set", pins.by_slug)
'led'
>>> node.command_slug("edge-agent/kitchen/GPIO17/set", pins.by_slug) is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from edge.config.mqtt import InputPresentation
from edge.core.exc import ConfigError
from edge.hardware.pins import Pin
from edge.mqtt.entities import EntityKind, Naming, kind_for
from edge.mqtt.topic_names import NODE_TOPICS, Topics, slugify
from peripherals.base import PinMode
from peripherals.exc import BoardError


@dataclass(frozen=True)
class PinTopic:
    pin: Pin
    slug: str
    kind: EntityKind
    naming: Naming = field(default_factory=Naming)

    @property
    def spec(self) -> str:
        """How the hardware door is asked for this pin (``gpio:GPIO17``)."""
        return f"{self.pin.board}:{self.pin.pin}"

    def state_payloads(self, topics: Topics, value: float) -> dict[str, str]:
        """Topic -> payload for the pin's logical ``value`` (1/0, a duty 0..1, an angle), as
        its kind shows it (an input: pressed or not)."""
        shown = self.kind.shown_value(self.pin, self.naming, value)
        return self.kind.state_payloads(topics, self.slug, shown)

    def discovery(self) -> dict[str, Any]:
        """The discovery keys that depend on this pin (an input's ``device_class``)."""
        return self.kind.pin_discovery(self.pin, self.naming)


@dataclass(frozen=True)
class NodePins:
    by_slug: dict[str, PinTopic]
    by_pin: dict[tuple[str, str], PinTopic]

    @classmethod
    def build(cls, pins: Iterable[Pin], servos: Iterable[str],
              locate: Callable[[str], tuple[str, str]] | None = None,
              inputs: Mapping[str, InputPresentation] | None = None) -> NodePins:
        """``servos`` names PWM pins (names, aliases, ``board:pin``) that drive servos;
        ``locate`` (the hardware's) resolves names the pins' aliases do not hold; ``inputs``
        (``[mqtt.inputs]``) says how inputs are shown, by pin name or alias. An ``inputs`` name
        that is no allowlisted input pin is a ConfigError naming its key."""
        wanted = set(servos)
        if locate is not None:
            wanted |= {f"{board}:{pin}" for board, pin in map(locate, servos)}
        pins = list(pins)
        names = [slugify(p.aliases[0] if p.aliases else p.pin) for p in pins]
        clashes = {n for n in names if names.count(n) > 1 or n.lower() in NODE_TOPICS}
        naming = Naming(frozenset(wanted), _inputs_by_pin(inputs or {}, pins, locate))
        rows = [PinTopic(p, f"{slugify(p.board)}-{n}" if n in clashes else n, kind_for(p, naming),
                         naming)
                for p, n in zip(pins, names, strict=True)]
        return cls({r.slug: r for r in rows}, {(r.pin.board, r.pin.pin): r for r in rows})


def _inputs_by_pin(inputs: Mapping[str, InputPresentation], pins: list[Pin],
                   locate: Callable[[str], tuple[str, str]] | None) -> dict[str, InputPresentation]:
    """``[mqtt.inputs]`` keyed by ``board:pin``; each name must be an allowlisted input pin."""
    known = {(p.board, p.pin): p for p in pins}
    found: dict[str, InputPresentation] = {}
    for name, options in inputs.items():
        pin = next((p for p in pins if name in (p.pin, f"{p.board}:{p.pin}", *p.aliases)), None)
        if pin is None and locate is not None:
            try:
                pin = known.get(locate(name))
            except (BoardError, LookupError):
                pin = None
        if pin is None:
            raise ConfigError(f"mqtt.inputs.{name}: no allowlisted pin is called {name!r}; name "
                              "an input pin (its name or alias) from [boards.NAME.pins]")
        if pin.mode is not PinMode.INPUT:
            raise ConfigError(f"mqtt.inputs.{name}: {pin.label} is configured as "
                              f"{pin.mode.value}, not input; [mqtt.inputs] says how input pins "
                              "are shown")
        found[f"{pin.board}:{pin.pin}"] = options
    return found
