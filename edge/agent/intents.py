"""Local intents: the requests people send most, understood without a model.

A message is matched against the words of the catalog's pin, sensor and history operations and
the agent's own names (pin names, aliases, ``board:pin``, sensor names and their quantities).
Every word of the message must be accounted for, so anything unusual ("turn the pump on and the
fan off", "water the plants") is left to the model. What matches is one call of an operation's
tool (:class:`Intent`), run through the one door by :mod:`edge.agent.intent_turn`.

:func:`is_state_question` is the restraint the model's turns get too: a question about state
is answered with the reading tools only, whoever answers it.

>>> words = Vocabulary.of({"pump": "gpio:GPIO22", "fan": "gpio:GPIO23"}, outputs={"gpio:GPIO22",
...                       "gpio:GPIO23"}, sensors={"greenhouse": ("temperature", "humidity")})
>>> words.match("Turn the pump on, please")
Intent(operation='gpio.write', args={'pin': 'gpio:GPIO22', 'value': 'on'}, seconds=None)
>>> words.match("pump on for 10 minutes").seconds
600.0
>>> words.match("is the fan on?")
Intent(operation='gpio.read', args={'pin': 'gpio:GPIO23'}, seconds=None)
>>> words.match("what is the temperature in the greenhouse?").args
{'name': 'greenhouse'}
>>> words.match("what did the pump do today?").operation
'history'
>>> words.match("turn the pump on and the fan off") is None
True
>>> is_state_question("is the pump running?"), is_state_question("could you turn the fan on?")
(True, False)
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# each intent calls one operation of the catalog (:data:`edge.ops.catalog.CATALOG`)
SWITCH = "gpio.write"
READ = "gpio.read"
SENSOR = "sensors"
HISTORY = "history"

_QUESTION_START = re.compile(
    r"^(?:is|are|was|were|what|what's|whats|which|how|when|did|does|do|has|have|had|why|who|"
    r"where|should|shall|tell me|show me|check|any|status)\b")
_POLITE_REQUEST = re.compile(
    r"^(?:please\s+)?(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(?:turn|switch|start|"
    r"stop|put|set|power|shut|enable|disable|activate|deactivate|run)\b")

FILLER = frozenset({"please", "the", "my", "our", "a", "an", "now", "can", "could", "would",
                    "will", "you", "u", "hey", "ok", "okay", "kindly", "right", "away", "just",
                    "go", "ahead", "me", "for", "to", "thanks", "thank", "pls", "it", "again"})
SWITCH_VERBS = {"turn": None, "switch": None, "put": None, "set": None, "power": None,
                "start": "on", "stop": "off", "enable": "on", "disable": "off",
                "activate": "on", "deactivate": "off", "shut": "off", "run": "on"}
LEVELS = {"on": "on", "off": "off", "down": None, "up": None}
PIN_QUESTION = frozenset({"is", "are", "what", "whats", "what's", "state", "status", "of",
                          "on", "off", "running", "still", "currently", "check", "tell", "show",
                          "if", "whether", "at", "moment", "doing", "how", "on?"})
SENSOR_QUESTION = frozenset({"what", "whats", "what's", "is", "how", "in", "at", "of", "inside",
                             "out", "reading", "readings", "current", "currently", "tell", "show",
                             "check", "there", "level", "value", "does", "say", "the"})
HISTORY_WORDS = frozenset({"what", "did", "do", "has", "have", "done", "history", "when", "was",
                           "last", "today", "on", "off", "been", "switched", "turned", "who",
                           "of", "show", "tell", "since", "yesterday", "happened", "with"})
QUANTITY_WORDS = {"temperature": "temperature", "temp": "temperature", "warm": "temperature",
                  "hot": "temperature", "cold": "temperature", "humidity": "humidity",
                  "humid": "humidity", "pressure": "pressure"}
_UNITS = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "m": 60, "min": 60,
          "mins": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600, "hrs": 3600,
          "hour": 3600, "hours": 3600}
_DURATION = re.compile(r"\bfor\s+(\d+(?:\.\d+)?|an?|one)\s*([a-z]+)\b")
_WORD = re.compile(r"[a-z0-9_:'.-]+")


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("?", " ? ").replace("_", " ").replace("-", " ").split())


def is_state_question(text: str) -> bool:
    """Whether ``text`` asks about state rather than for a change: it ends with a question mark
    or starts like a question, and is not a polite request to switch ("could you turn...?")."""
    said = _norm(text).strip(" .!")
    if _POLITE_REQUEST.match(said):
        return False
    first = said.split(" ", 1)[0] if said else ""
    if first in SWITCH_VERBS or first in ("please",):
        return False
    return said.endswith("?") or _QUESTION_START.match(said) is not None


@dataclass(frozen=True)
class Intent:
    """One call of a catalog operation, understood without a model; ``seconds``: a switch on
    that is switched off again after that long ("pump on for 10 minutes")."""

    operation: str
    args: dict[str, Any]
    seconds: float | None = None

    @property
    def actuates(self) -> bool:
        return self.operation == SWITCH


def _since_midnight(now: float) -> str:
    local = time.localtime(now)
    return f"{local.tm_hour * 60 + local.tm_min + 1}m"


@dataclass(frozen=True)
class Vocabulary:
    """The names an intent may use: pin names and aliases (``pins``: name -> ``board:pin``),
    which of those pins are outputs, and the sensors with their quantities."""

    pins: Mapping[str, str]
    outputs: frozenset[str] = frozenset()
    sensors: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    """Sensor name as said -> (its configured name, its quantities)."""

    @classmethod
    def of(cls, pins: Mapping[str, str], *, outputs: Iterable[str] = (),
           sensors: Mapping[str, Iterable[str]] | None = None) -> Vocabulary:
        return cls({_norm(name): spec for name, spec in pins.items()}, frozenset(outputs),
                   {_norm(name): (name, tuple(q)) for name, q in (sensors or {}).items()})

    def _find(self, said: str, names: Iterable[str]) -> tuple[list[str], str]:
        """The names mentioned in ``said`` (longest first) and the text without them."""
        found = []
        for name in sorted(names, key=len, reverse=True):
            pattern = re.compile(rf"(?<![\w:]){re.escape(name)}(?![\w:])")
            if pattern.search(said):
                found.append(name)
                said = pattern.sub(" ", said)
        return found, said

    def match(self, text: str, now: float | None = None) -> Intent | None:
        """The intent ``text`` says, or None when any of its words is not understood."""
        said = _norm(text).strip(" .!")
        duration = _DURATION.search(said)
        seconds = None
        if duration:
            count, unit = duration.groups()
            if unit not in _UNITS:
                return None
            seconds = (1.0 if count in ("a", "an", "one") else float(count)) * _UNITS[unit]
            said = said[:duration.start()] + " " + said[duration.end():]
        pins, rest = self._find(said, self.pins)
        sensors, rest = self._find(rest, self.sensors)
        words = [w.strip(".,!") for w in _WORD.findall(rest.replace(",", " "))]
        words = [w for w in words if w]
        question = said.endswith("?") or _QUESTION_START.match(said) is not None
        specs = {self.pins[name] for name in pins}
        if len(specs) == 1 and not sensors:
            spec = specs.pop()
            if seconds is None and question and self._history(words):
                since = _since_midnight(now or time.time()) if "today" in words else None
                return Intent(HISTORY, {"pin": spec, **({"since": since} if since else {})})
            if seconds is None and is_state_question(text):
                return Intent(READ, {"pin": spec}) if set(words) <= PIN_QUESTION | FILLER else None
            return self._switch(spec, words, seconds)
        if not specs and seconds is None and question:
            return self._sensor(sensors, words)
        return None

    def _switch(self, spec: str, words: list[str], seconds: float | None) -> Intent | None:
        if spec not in self.outputs:
            return None
        levels = set()
        for word in words:
            if word in SWITCH_VERBS:
                if SWITCH_VERBS[word]:
                    levels.add(SWITCH_VERBS[word])
            elif word in LEVELS:
                if LEVELS[word] is None:
                    return None
                levels.add(str(LEVELS[word]))
            elif word not in FILLER:
                return None
        if len(levels) != 1 or (seconds is not None and levels != {"on"}):
            return None
        return Intent(SWITCH, {"pin": spec, "value": levels.pop()}, seconds)

    @staticmethod
    def _history(words: list[str]) -> bool:
        return (set(words) <= HISTORY_WORDS | FILLER
                and bool({"did", "history", "when", "today", "last", "done"} & set(words)))

    def _sensor(self, sensors: list[str], words: list[str]) -> Intent | None:
        quantities = {QUANTITY_WORDS[w] for w in words if w in QUANTITY_WORDS}
        if any(w not in SENSOR_QUESTION | FILLER | QUANTITY_WORDS.keys() for w in words):
            return None
        if len(sensors) == 1:
            name = sensors[0]
        elif not sensors and len(quantities) == 1:
            having = [n for n, (_, q) in self.sensors.items() if quantities <= set(q)]
            if len(having) != 1:
                return None
            name = having[0]
        else:
            return None
        real, known = self.sensors[name]
        if quantities and not quantities <= set(known):
            return None
        if not quantities and not {"reading", "readings", "say"} & set(words):
            return None
        return Intent(SENSOR, {"name": real})
