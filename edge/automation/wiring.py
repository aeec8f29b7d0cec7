"""The rules and interlocks that watch an input, in wiring terms: what a person checks against
the wires before power is on (``edge-cli config check``), and which of them mean something else
since an input's "on" became "active" (:func:`edge.hardware.pins.input_active_low`).

>>> from peripherals.base import PinMode
>>> tank = Pin("gpio", "GPIO5", PinMode.INPUT, aliases=("tank_low",), active_low=True)
>>> pump = Pin("gpio", "GPIO22", PinMode.OUTPUT, safe=False, aliases=("pump",))
>>> lock = Interlock("dry-run", "forbid", pump, True, PinLevel("gpio", "GPIO5", "tank_low", True))
>>> interlock_note(lock, tank)
'dry-run: pump refused while tank_low is on (its switch is closed: line low, pulled up)'
>>> interlock_change(lock, tank, 0).split(";")[0]
'interlocks.0 (dry-run): `tank_low on` now holds while its switch is closed: line low, pulled up'
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from edge.automation.engine import Rule
from edge.automation.interlocks import Interlock, Interlocks, PinLevel, pin_name
from edge.automation.rules import PinTrigger
from edge.config.model import Config
from edge.hardware import Hardware
from edge.hardware.pins import Pin, wiring
from peripherals.base import PinMode, Pull
from peripherals.exc import BoardError

CHANGED = ("before this version it meant a high line; check it against the wiring, "
           "and see 'Changes' in the manual, docs/changes.md")


def _changed(pin: Pin, named: set[tuple[str, str]]) -> bool:
    """An input whose ``on`` was a high line before: pulled up, without an ``active`` of its
    own (``named``: the pins whose config says ``active``, a key older configs do not have)."""
    return (pin.mode is PinMode.INPUT and pin.pull is Pull.UP and pin.active_low
            and (pin.board, pin.pin) not in named)


def _named_active(config: Config, hardware: Hardware) -> set[tuple[str, str]]:
    named = set()
    for board, section in config.boards.items():
        for key, pin in section.pins.items():
            if pin.active is not None:
                with contextlib.suppress(BoardError):
                    named.add(hardware.locate(f"{board}:{key}"))
    return named


def _watched(lock: Interlock, hardware: Hardware) -> Pin | None:
    """The input a ``forbid``'s ``while`` watches, if it watches one."""
    if not isinstance(lock.condition, PinLevel):
        return None
    pin = hardware.pins.get((lock.condition.board, lock.condition.pin))
    return pin if pin is not None and pin.mode is PinMode.INPUT else None


def interlock_note(lock: Interlock, pin: Pin) -> str:
    assert lock.target is not None and isinstance(lock.condition, PinLevel)
    state = "on" if lock.condition.on else "off"
    refused = "refused" if lock.forbid_on else "refused off"
    return (f"{lock.name}: {pin_name(lock.target)} {refused} while {lock.condition.name} is "
            f"{state} ({wiring(pin, lock.condition.on, its=True)})")


def interlock_change(lock: Interlock, pin: Pin, index: int) -> str:
    assert isinstance(lock.condition, PinLevel)
    on = lock.condition.on
    return (f"interlocks.{index} ({lock.name}): `{lock.condition.name} {'on' if on else 'off'}` "
            f"now holds while {wiring(pin, on, its=True)}; {CHANGED}")


def rule_note(rule: Rule, pin: Pin) -> str | None:
    trigger = rule.trigger
    assert isinstance(trigger, PinTrigger)
    name = pin_name(pin)
    if trigger.edge in ("on", "off"):
        return f"rule {rule.name}: runs when {name} turns {trigger.edge} " \
               f"({wiring(pin, trigger.edge == 'on', its=True)})"
    if trigger.edge in ("rising", "falling"):
        high = trigger.edge == "rising"
        return f"rule {rule.name}: runs when {name}'s line {'rises' if high else 'falls'} " \
               f"({wiring(pin, high != pin.active_low, its=True)})"
    return None


def notes(interlocks: Interlocks, rules: Sequence[Rule]) -> list[str]:
    """Each interlock and rule on an input, in wiring terms (``config check``)."""
    found = [interlock_note(lock, pin) for _, lock, pin in _interlocks_on_inputs(interlocks)]
    for rule, pin in _rules_on_inputs(interlocks.hardware, rules):
        if (note := rule_note(rule, pin)) is not None:
            found.append(note)
    return found


def changes(config: Config, interlocks: Interlocks, rules: Sequence[Rule]) -> list[str]:
    """The interlocks and rules on a pulled-up input whose ``on``/``off`` meant a high line
    before this version and now means its switch closed (a warning each, at ``config check``
    and at the agent's start)."""
    named = _named_active(config, interlocks.hardware)
    found = [interlock_change(lock, pin, index)
             for index, lock, pin in _interlocks_on_inputs(interlocks) if _changed(pin, named)]
    for rule, pin in _rules_on_inputs(interlocks.hardware, rules):
        words = rule.when.split()
        if _changed(pin, named) and words[-1].lower() in ("on", "off"):
            found.append(f"rule {rule.name}: `{rule.when}` now fires when "
                         f"{wiring(pin, words[-1].lower() == 'on', its=True)}; {CHANGED}")
    return found


def _interlocks_on_inputs(interlocks: Interlocks) -> Iterator[tuple[int, Interlock, Pin]]:
    """(index in ``[[interlocks]]``, interlock, input) for each ``while`` on an input."""
    for index, lock in enumerate(interlocks.interlocks):
        if (pin := _watched(lock, interlocks.hardware)) is not None:
            yield index, lock, pin


def _rules_on_inputs(hardware: Hardware, rules: Sequence[Rule]) -> Iterator[tuple[Rule, Pin]]:
    for rule in rules:
        if isinstance(rule.trigger, PinTrigger):
            pin = hardware.pins.get((rule.trigger.board, rule.trigger.pin))
            if pin is not None:
                yield rule, pin
