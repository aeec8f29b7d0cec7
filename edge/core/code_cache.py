"""The code compiled from text as modules are imported, kept from one run of ``edge-cli`` to the
next: dataclasses' methods and typing's forward references.

A dataclass's methods (``__init__``, ``__repr__``, ``__eq__``, and a frozen one's ``__setattr__``,
``__delattr__`` and ``__hash__``) are written out as source text and compiled when the class is
made: on Python 3.11 about 70 µs a method and some 800 methods on ``edge-cli run``'s way to its
first turn (this package's records and its libraries'), 50 to 60 ms of a 360 ms one-shot turn,
more than anything else the agent does before it answers. pydantic, reading the string
annotations of the config's and the tools' models, has ``typing`` compile each as a forward
reference: about 1,150 more, 8 ms. The text decides the code, so what one run compiled serves
the next, as ``__pycache__`` serves imports. The program (``edge-cli``, not the package:
importers of ``edge`` keep their interpreter as it is) gives the ``dataclasses`` module an
``exec``, and ``typing`` a ``compile``, that look the text up before compiling it; nothing else
changes.

One file per command (``run``, ``status``...) in the cache directory
(:func:`edge.core.paths.cache_dir`):

- read at the first text a run compiles (``--version`` compiles none), and only if this user
  owns it and nobody else may write it: what it holds is run, like a ``.pyc``; one written by
  another Python, or unreadable, is ignored and replaced;
- written only when a run compiled a text the file lacked, atomically (a new file renamed over
  the old), at most :data:`MAX_TEXTS` texts;
- let go once the agent is ready (:func:`settle`): the texts used by then are not needed again,
  and a daemon would otherwise hold them (1 MB) for as long as it runs.

Nothing here fails a command: a cache that cannot be read or written is a slower start.
"""

from __future__ import annotations

import marshal
import os
import sys
import typing
from collections.abc import Mapping
from types import CodeType
from typing import Any

from edge.core.paths import cache_dir

MAX_TEXTS = 4000
"""A file never holds more texts than this (a command's path makes about 800)."""

EVAL = "\0eval "
"""Before a text compiled as an expression, in the file (the others are ``exec``'s)."""

FORMAT = (sys.hexversion, 1)
"""Written with the texts: marshal's format and the bytecode belong to one Python."""


class CodeTable:
    """The texts one command compiles and their code: :meth:`exec` stands in for the builtin in
    the ``dataclasses`` module, :meth:`compile` in ``typing``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.codes: dict[str, CodeType] | None = None
        """None until the first text is compiled."""
        self.compiled = 0
        """Texts compiled since the file was last written."""
        self.settled = False
        self._used: set[int] = set()
        """``hash()`` of each text looked up before :meth:`settle` (let go of since)."""

    def exec(self, source: Any, globals: dict[str, Any] | None = None,
             locals: dict[str, Any] | None = None, /) -> None:
        """``exec`` for ``dataclasses``."""
        exec(self.code(source, "exec") if isinstance(source, str) else source, globals, locals)

    def compile(self, source: Any, filename: str, mode: str, flags: int = 0,
                dont_inherit: bool = False, optimize: int = -1) -> Any:
        """``compile`` for ``typing`` (a forward reference: an expression from ``<string>``)."""
        if isinstance(source, str) and filename == "<string>" and mode == "eval" and not flags \
                and optimize == -1:
            return self.code(source, "eval")
        return compile(source, filename, mode, flags, dont_inherit, optimize)

    def code(self, source: str, mode: str) -> CodeType:
        """The code of ``source`` compiled in ``mode`` (``exec`` or ``eval``), kept."""
        if self.codes is None:
            self.codes = self.read()
        key = source if mode == "exec" else EVAL + source
        code = self.codes.get(key)
        if code is None:
            code = compile(source, "<string>", mode)  # a SyntaxError goes to the caller
            if not (self.settled and hash(key) in self._used):  # not a text let go of
                self.codes[key] = code
                self.compiled += 1
        if not self.settled:
            self._used.add(hash(key))
        return code

    def read(self) -> dict[str, CodeType]:
        """The file's texts, or none when it is missing, not ours, writable by others, broken
        or another Python's."""
        try:
            with open(self.path, "rb") as file:
                info = os.fstat(file.fileno())
                if info.st_uid != os.getuid() or info.st_mode & 0o022:
                    return {}
                stored = marshal.loads(file.read())  # load(file) reads a few bytes a call: 10x slower
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        if not (isinstance(stored, tuple) and len(stored) == 2 and stored[0] == FORMAT
                and isinstance(stored[1], dict)):
            return {}
        return stored[1]

    def save(self) -> None:
        """Write the file if this run compiled a text it lacked."""
        if not self.compiled or self.codes is None:
            return
        codes = {**self.read(), **self.codes} if self.settled else self.codes
        if len(codes) > MAX_TEXTS:
            codes = self.codes if len(self.codes) <= MAX_TEXTS else {}
        part = f"{self.path}.{os.getpid()}.part"
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as file:
                marshal.dump((FORMAT, codes), file)
            os.replace(part, self.path)
        except (OSError, ValueError):
            from contextlib import suppress

            with suppress(OSError):
                os.unlink(part)
            return
        self.compiled = 0

    def settle(self) -> None:
        """The agent is ready: write what is new, then let go of the texts used so far (the
        classes they made exist); later texts are merged into the file by :meth:`save`."""
        self.save()
        if self.codes is not None and not self.settled:  # list(): a thread may add meanwhile
            self.codes = {text: code for text, code in list(self.codes.items())
                          if hash(text) not in self._used}
        self.settled = True


_table: CodeTable | None = None


class WhenImported:
    """A meta path finder that sets ``attribute`` on module ``name`` once it is imported, so a
    command that never imports it (``status`` through the agent's socket does not import
    ``dataclasses``) pays nothing. It finds nothing itself: the path finder finds the module,
    whose loader runs it and then sets the name."""

    def __init__(self, name: str, attribute: str, value: Any) -> None:
        self.name, self.attribute, self.value = name, attribute, value

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            setattr(module, self.attribute, self.value)  # found before the builtin of that name

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install(command: str, env: Mapping[str, str] = os.environ) -> CodeTable:
    """Keep the code ``command`` compiles from text (once per process, before ``dataclasses``
    is imported; the program calls it)."""
    global _table
    if _table is None:
        _table = CodeTable(str(cache_dir(env) / f"code-{command}.marshal"))
        typing.compile = _table.compile  # type: ignore[attr-defined]  # found before the builtin
        if (dataclasses := sys.modules.get("dataclasses")) is not None:
            dataclasses.exec = _table.exec  # type: ignore[attr-defined]
        else:
            sys.meta_path.insert(0, WhenImported("dataclasses", "exec", _table.exec))
    return _table


def settle() -> None:
    """The agent is ready: write what is new and let go of the rest."""
    if _table is not None:
        _table.settle()
