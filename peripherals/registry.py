"""Adapters that register themselves: board types and sensor drivers, found by their type name.

Each adapter is one spec (:class:`peripherals.base.BoardSpec`,
:class:`peripherals.sensors.base.SensorSpec`): its type name, its options (the keys of its
config section, a pydantic model) and how it is built. A registry finds the specs in two places:

- its table of the adapters this project ships, one line each (``"bme280":
  "peripherals.sensors.bme280:SPEC"``, in :mod:`peripherals.factory` and
  :mod:`peripherals.sensors.factory`);
- the entry points of other installed packages, as gpiozero finds its pin factories::

      [project.entry-points."edge_agent.sensors"]
      fake_lux = "fake_lux:SPEC"

Nothing is imported until the registry is first asked; then each module once. Asked for one
built-in type (:meth:`Registry.get`, as reading a config's sections does), the registry imports
that type's module alone and reads no package's metadata; listing the types, or asking for one
that is not built in, loads them all. An entry point that fails to load, or that gives something
other than a spec of its own name, is logged and kept in :attr:`Registry.broken`, never raised:
the agent runs without it and ``edge-cli doctor`` names it. A built-in that fails to load is a
bug in this project, and raises.

>>> from peripherals.sensors.factory import SENSORS
>>> SENSORS.get("bme280").options.__name__
'Bme280Options'
>>> SENSORS.get("bme680")
Traceback (most recent call last):
...
ValueError: unknown sensor type 'bme680'; use one of: pi, ds18b20, bme280, ads1115, mcp3008, ...
"""

from __future__ import annotations

import functools
import importlib
import logging
import re
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar, cast

from peripherals.options import Options

if TYPE_CHECKING:
    from collections.abc import Iterable
    from importlib.metadata import EntryPoint

log = logging.getLogger(__name__)

_KIND = re.compile(r"[a-z][a-z0-9_]{0,63}")


OptionsT = TypeVar("OptionsT", bound=Options)


@dataclass(frozen=True)
class AdapterSpec(Generic[OptionsT]):
    """What every spec has: the type name it is registered under (a section's ``type``) and its
    options, a subclass of :attr:`options_base`."""

    kind: str
    options: type[OptionsT]
    options_base: ClassVar[type[Options]] = Options

    def __post_init__(self) -> None:
        base = self.options_base
        if not (isinstance(self.options, type) and issubclass(self.options, base)):
            raise TypeError(f"{self.kind!r}: options must subclass {base.__module__}.{base.__name__}")


S = TypeVar("S", bound=AdapterSpec[Any])


@dataclass(frozen=True)
class BrokenEntryPoint:
    """An installed entry point that gave no usable spec, and why."""

    group: str
    name: str
    target: str
    """What the entry point names, ``module:attribute``."""
    distribution: str
    """The package that declares it, with its version."""
    error: str

    def __str__(self) -> str:
        return f"{self.name} = {self.target!r} from {self.distribution}: {self.error}"


class Registry(Generic[S]):
    """The specs of one kind of adapter: the built-in ones first, in the table's order, then
    those of installed packages by name. ``reserved`` names are taken by something that is not
    built here (a sensor ``analog`` is a board's pin, read through the board)."""

    def __init__(self, what: str, group: str, builtin: Mapping[str, str], spec_type: type[S],
                 reserved: Collection[str] = ()) -> None:
        self.what = what
        self.group = group
        self.builtin = dict(builtin)
        self.spec_type = spec_type
        self.reserved = tuple(reserved)
        self._specs: dict[str, S] | None = None
        self._builtins: dict[str, S] = {}
        """The built-in specs imported so far, each on its own or by :meth:`_load`."""
        self._origins: dict[str, str] = {}
        self._broken: list[BrokenEntryPoint] = []

    def specs(self) -> Mapping[str, S]:
        """Type name -> spec, loaded on the first call."""
        if self._specs is None:
            self._specs = self._load()
        return self._specs

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.specs())

    @property
    def broken(self) -> list[BrokenEntryPoint]:
        """The entry points of ``group`` that could not be used (loads the registry)."""
        self.specs()
        return list(self._broken)

    def origin(self, kind: str) -> str:
        """Where ``kind`` comes from: ``built in``, or the package that installed it."""
        self.specs()
        return self._origins[kind]

    def get(self, kind: str) -> S:
        """The spec registered as ``kind``; a ValueError naming the known ones otherwise."""
        spec = self.find(kind)
        if spec is None:
            known = ", ".join([*self.specs(), *self.reserved])
            raise ValueError(f"unknown {self.what} type {kind!r}; use one of: {known}")
        return spec

    def find(self, kind: str) -> S | None:
        """The spec registered as ``kind``, or None. A built-in one is imported on its own (the
        other built-ins and the installed packages' entry points are not read); any other name
        loads the registry."""
        if self._specs is None and kind in self.builtin:
            return self._builtin(kind)
        return self.specs().get(kind)

    def _builtin(self, kind: str) -> S:
        spec = self._builtins.get(kind)
        if spec is None:
            spec = self._builtins[kind] = self._check(kind, _resolve(self.builtin[kind]))
        return spec

    def _load(self) -> dict[str, S]:
        specs: dict[str, S] = {}
        for kind in self.builtin:
            specs[kind] = self._builtin(kind)
            self._origins[kind] = "built in"
        for point in sorted(installed_entry_points(tuple(sys.path)).select(group=self.group),
                            key=lambda p: p.name):
            dist = f"{point.dist.name} {point.dist.version}" if point.dist else "an unknown package"
            try:
                if point.name in specs or point.name in self.reserved:
                    raise ValueError(f"{self.what} type {point.name!r} is taken "
                                     f"({self._origins.get(point.name, 'reserved')})")
                spec = self._check(point.name, point.load())
            except Exception as exc:  # a third party's bug: the agent runs without it
                broken = BrokenEntryPoint(self.group, point.name, point.value, dist,
                                f"{type(exc).__name__}: {exc}")
                log.warning("adapter_unusable group=%s name=%s target=%s package=%r error=%r",
                            self.group, point.name, point.value, dist, broken.error)
                self._broken.append(broken)
                continue
            specs[point.name] = spec
            self._origins[point.name] = dist
        return specs

    def _check(self, kind: str, spec: object) -> S:
        if not _KIND.fullmatch(kind):
            raise ValueError(f"{kind!r} is no type name: use lower-case letters, digits and '_', "
                             "starting with a letter")
        if not isinstance(spec, self.spec_type):
            raise TypeError(f"expected a {self.spec_type.__name__}, got {type(spec).__name__}")
        if spec.kind != kind:
            raise ValueError(f"the spec is named {spec.kind!r}, registered as {kind!r}; use "
                             "one name for both")
        return spec


class EntryPointGroups(Protocol):
    """What ``importlib.metadata.entry_points()`` returns (SelectableGroups on Python 3.11,
    EntryPoints from 3.12): both select a group."""

    def select(self, *, group: str) -> Iterable[EntryPoint]: ...


@functools.lru_cache(maxsize=1)
def installed_entry_points(path: tuple[str, ...]) -> EntryPointGroups:
    """Every installed package's entry points, read once for all registries while the module
    path is ``path`` (each ``importlib.metadata.entry_points(group=...)`` reads every package's
    metadata again: 1.5-2.5 ms a registry at start)."""
    from importlib.metadata import entry_points

    return cast(EntryPointGroups, entry_points())


def _resolve(target: str) -> Any:
    """``module:attribute``, imported."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)
