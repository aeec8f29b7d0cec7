"""One exception tree: every exception class in edge and peripherals is an EdgeError or a
BoardError, none in the OSError family, and each appears, under its base and with its mixed-in
builtins and its module, in the tree drawn in ``edge.core.exc`` (the board side in
``peripherals.exc``), so the drawing cannot go stale."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass
from types import ModuleType

import edge
import peripherals
from edge.core import exc as edge_exc
from edge.core.exc import EdgeError
from peripherals import exc as board_exc
from peripherals.exc import BoardError

LINE = re.compile(r"^(?P<indent> *)(?P<name>[A-Z]\w*)(?:\((?P<mixins>[\w, ]+)\))?"
                  r"(?: \[(?P<module>[\w.]+)\])?: (?P<when>\S.*)$")


@dataclass(frozen=True)
class Drawn:
    name: str
    parent: str | None
    mixins: tuple[str, ...]
    module: str
    when: str


def every_module() -> list[ModuleType]:
    found = []
    for package in (edge, peripherals):
        found.append(package)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.name.endswith("__main__"):  # running it is the command line
                found.append(importlib.import_module(info.name))
    return found


def exception_classes() -> list[type[BaseException]]:
    return [cls for module in every_module() for cls in vars(module).values()
            if inspect.isclass(cls) and issubclass(cls, BaseException)
            and cls.__module__ == module.__name__]


def drawing(module: ModuleType) -> list[Drawn]:
    """The tree in ``module``'s docstring: the indented block after its ``::``."""
    doc = module.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    parents: list[tuple[int, str]] = []
    drawn = []
    for line in block.splitlines():
        match = LINE.match(line)
        assert match, f"not a line of the tree: {line!r}"
        indent = len(match["indent"])
        while parents and parents[-1][0] >= indent:
            parents.pop()
        name = match["name"]
        mixins = tuple(m.strip() for m in (match["mixins"] or "").split(",") if m.strip())
        drawn.append(Drawn(name, parents[-1][1] if parents else None, mixins,
                           match["module"] or module.__name__, match["when"]))
        parents.append((indent, name))
    return drawn


def problems(drawn: list[Drawn], classes: list[type[BaseException]]) -> list[str]:
    """Where the drawing and the classes disagree."""
    by_name = {d.name: d for d in drawn}
    found = []
    for cls in classes:
        line = by_name.pop(cls.__name__, None)
        if line is None:
            found.append(f"{cls.__module__}.{cls.__name__} is not drawn")
            continue
        base, *mixins = cls.__bases__
        expected = Drawn(cls.__name__, None if base is Exception else base.__name__,
                         tuple(m.__name__ for m in mixins), cls.__module__, line.when)
        if line != expected:
            found.append(f"{cls.__name__} is drawn as {line}, but is {expected}")
    found += [f"{name} is drawn but no such class exists" for name in by_name]
    return found


def test_every_error_is_an_edge_error_or_a_board_error():
    classes = exception_classes()
    assert EdgeError in classes and BoardError in classes and len(classes) > 30
    stray = [f"{c.__module__}.{c.__name__}" for c in classes
             if not issubclass(c, (EdgeError, BoardError))]
    assert stray == []
    assert not issubclass(BoardError, EdgeError) and not issubclass(EdgeError, BoardError)


def test_no_error_is_an_os_error():
    """An ``except OSError`` around a file or a socket never swallows the project's errors."""
    assert [c.__name__ for c in exception_classes() if issubclass(c, OSError)] == []


def test_the_edge_tree_draws_every_edge_error():
    classes = [c for c in exception_classes() if issubclass(c, EdgeError)] + [BoardError]
    assert problems(drawing(edge_exc), classes) == []


def test_the_board_tree_draws_every_board_error():
    classes = [c for c in exception_classes() if issubclass(c, BoardError)]
    assert problems(drawing(board_exc), classes) == []


def test_a_stale_drawing_is_caught():
    class Orphan(EdgeError):
        pass

    class Moved(EdgeError, LookupError):
        pass

    drawn = drawing(edge_exc)
    moved = Drawn("Moved", "ConfigError", (), edge_exc.__name__, "somewhere else")
    stale = [d for d in drawn if d.name != "PolicyDenied"] + [moved]
    found = problems(stale, [EdgeError, edge_exc.PolicyDenied, Orphan, Moved])
    assert found[:2] == ["edge.core.exc.PolicyDenied is not drawn",
                         "tests.test_exceptions.Orphan is not drawn"]
    assert found[2].startswith("Moved is drawn as ") and "parent='ConfigError'" in found[2]
    assert "ConfigError is drawn but no such class exists" in found


def test_builtins_are_mixed_in_where_callers_may_catch_them():
    from edge.core.exc import ConfigError
    from edge.mqtt.commands import BadPayload
    from peripherals.exc import UnknownPin
    from peripherals.stm32_protocol import FrameError

    assert issubclass(UnknownPin, LookupError) and not issubclass(UnknownPin, KeyError)
    assert issubclass(ConfigError, ValueError) and issubclass(BadPayload, ValueError)
    assert issubclass(FrameError, ValueError) and issubclass(FrameError, BoardError)
