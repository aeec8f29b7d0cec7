"""pydantic's validation errors in our words: every problem at once, each at the key path the
user wrote (no union tags), with what was expected and what was given; no error codes, no links.

>>> from pydantic import BaseModel, Field, ValidationError
>>> class Pin(BaseModel, extra="forbid"):
...     mode: Literal["input", "output"]
...     max_on_seconds: float | None = Field(default=None, gt=0)
>>> try:
...     Pin.model_validate({"mode": "out", "max_on_seconds": -1, "max_on_secs": 2})
... except ValidationError as exc:
...     print("\\n".join(map(str, problems(exc, Pin))))
mode: expected 'input' or 'output' (got 'out')
max_on_seconds: must be greater than 0 (got -1)
max_on_secs: unknown key (did you mean 'max_on_seconds'?)

The messages are read by people (``edge-cli config check``) and by models (a tool's arguments),
so they say what to write. The config loader adds the file, the environment variable a value came
from, and keeps secrets out (:mod:`edge.config.loader`).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

Loc = tuple[str | int, ...]
Kind = Literal["missing", "unknown", "type", "value"]


@dataclass(frozen=True)
class Problem:
    """One problem with the input: where (the key path as written), what kind, and what to do."""

    loc: Loc
    kind: Kind
    message: str

    @property
    def where(self) -> str:
        return ".".join(str(part) for part in self.loc)

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.loc else self.message


def problems(exc: ValidationError, root: Any) -> list[Problem]:
    """Every error of ``exc`` in our words; ``root`` is what was validated (a model class or the
    type given to a TypeAdapter): its shape tells union tags from keys and suggests a key for a
    misspelt one."""
    found: list[Problem | Loc] = []
    """The problems in pydantic's order; a union's place is held by its location."""
    unions: dict[Loc, list[tuple[str | int, Problem]]] = {}
    for error in exc.errors(include_url=False):
        path = _Path.walk(root, error["loc"])
        problem = _problem(error, path)
        if path.union is None:
            found.append(problem)
            continue
        at, member = path.union
        if at not in unions:
            found.append(at)
            unions[at] = []
        unions[at].append((member, problem))
    return [p for item in found
            for p in ([item] if isinstance(item, Problem) else _union_problems(item, unions[item]))]


def shown(value: object) -> str:
    """A value as quoted in a message: tables and lists by their kind, the rest by repr, cut."""
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    if type(value).__name__ in ("SecretStr", "SecretBytes"):
        return "a secret"
    try:
        text = repr(value)
    except ValueError:  # an int past the 4300-digit limit of int -> text
        return "a value too long to show"
    return text if len(text) <= 80 else text[:77] + "..."


_EXPECTED = {
    "string_type": "text", "string_unicode": "text", "string_sub_type": "text",
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "int_parsing_size": "an integer",
    "float_type": "a number", "float_parsing": "a number", "finite_number": "a finite number",
    "bool_type": "true or false", "bool_parsing": "true or false",
    "none_required": "nothing (null)",
    "list_type": "a list", "tuple_type": "a list", "set_type": "a list", "frozen_set_type": "a list",
    "iterable_type": "a list",
    "dict_type": "a table", "model_type": "a table", "model_attributes_type": "a table",
    "dataclass_type": "a table", "mapping_type": "a table",
}
_BOUNDS = {"greater_than": ("gt", "greater than"), "greater_than_equal": ("ge", "at least"),
           "less_than": ("lt", "less than"), "less_than_equal": ("le", "at most")}
_UNITS = {"List": "items", "Tuple": "items", "Set": "items", "Dictionary": "entries"}


def _problem(error: ErrorDetails, path: _Path) -> Problem:
    kind, given, ctx = error["type"], error["input"], error.get("ctx") or {}
    loc = path.loc
    if kind in ("missing", "missing_argument", "missing_keyword_only_argument"):
        return Problem(loc, "missing", "required key is missing")
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        import difflib  # here: only a misspelt key needs it

        close = difflib.get_close_matches(str(loc[-1]), path.known, n=1) if loc else []
        return Problem(loc, "unknown", "unknown key" + (f" (did you mean {close[0]!r}?)" if close else ""))
    if kind in _EXPECTED:
        return Problem(loc, "type", f"expected {_EXPECTED[kind]} (got {shown(given)})")
    if kind in ("literal_error", "enum"):
        return Problem(loc, "type", f"expected {ctx['expected']} (got {shown(given)})")
    if kind in _BOUNDS:
        key, words = _BOUNDS[kind]
        return Problem(loc, "value", f"must be {words} {ctx[key]:g} (got {shown(given)})")
    if kind == "string_too_short":
        need = ctx["min_length"]
        return Problem(loc, "value", "must not be empty" if need == 1 else f"needs at least {need} characters")
    if kind == "string_too_long":
        length = f" (got {len(given)})" if isinstance(given, str) else ""
        return Problem(loc, "value", f"must have at most {ctx['max_length']} characters{length}")
    if kind in ("too_short", "too_long"):
        units = _UNITS.get(ctx.get("field_type", ""), "items")
        if kind == "too_short":
            need = ctx["min_length"]
            return Problem(loc, "value", "must not be empty" if need == 1 else f"needs at least {need} {units}")
        return Problem(loc, "value", f"must have at most {ctx['max_length']} {units} (got {ctx['actual_length']})")
    if kind in ("value_error", "assertion_error"):
        return Problem(loc, "value", str(ctx.get("error", error["msg"])))
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return _tag_problem(given, str(ctx["discriminator"]).strip("'"), path.tags, loc)
    return Problem(loc, "value", f"{error['msg'][:1].lower()}{error['msg'][1:]} (got {shown(given)})")


def _tag_problem(given: Any, key: str, choices: list[str], loc: Loc) -> Problem:
    """A union chosen by ``key`` (``type = "bme280"``) whose key is missing or names no member."""
    tags = ", ".join(choices)
    if not isinstance(given, Mapping):
        return Problem(loc, "type", f"expected a table (got {shown(given)})")
    if key not in given:
        return Problem(loc, "missing", f"{key} is missing; use one of: {tags}")
    return Problem((*loc, key), "value", f"unknown {key} {shown(given[key])}; use one of: {tags}")


def _union_problems(at: Loc, attempts: list[tuple[str | int, Problem]]) -> list[Problem]:
    """A value no member of a union took: the problems of the member that came furthest into
    it, or, when none got past the value itself, every member's expectation at once."""
    by_member: dict[str | int, list[Problem]] = {}
    for member, problem in attempts:
        by_member.setdefault(member, []).append(problem)
    best = max(by_member.values(), key=lambda found: max(len(p.loc) for p in found))
    if max(len(p.loc) for p in best) > len(at):
        return best
    wanted = list(dict.fromkeys(p.message.split(" (got ")[0] for _, p in attempts))
    if all(w.startswith("expected ") for w in wanted):
        wanted = ["expected " + " or ".join(w.removeprefix("expected ") for w in wanted)]
    _, got, given = attempts[0][1].message.partition(" (got ")
    return [Problem(at, "type", " or ".join(wanted) + got + given)]


class _Path:
    """A pydantic error location walked along the validated type: the keys as the user wrote
    them (union tags and labels dropped, ``[key]`` of a bad dict key dropped), the keys known
    where an unknown one was found, and the union the location went through, if any."""

    def __init__(self) -> None:
        self.loc: Loc = ()
        self.known: list[str] = []
        self.union: tuple[Loc, str | int] | None = None
        self.tags: list[str] = []
        """Where the location ends on a union chosen by a key: the key's values, in order."""

    @classmethod
    def walk(cls, root: Any, raw: tuple[str | int, ...]) -> _Path:
        path = cls()
        hint: Any = root
        parts = list(raw)
        while parts:
            chosen = chosen_by(hint)
            hint, tag_key = _unwrap(hint)
            if chosen is not None:  # the next part is the table's type, as in a tagged union's
                hint = chosen.member(parts.pop(0))
                continue
            members = _union_members(hint)
            if members is not None and len(members) == 1:  # X | None: no label in the location
                hint = members[0]
                continue
            if members is not None:
                part = parts.pop(0)
                if path.union is None and tag_key is None:
                    path.union = (path.loc, part)
                hint = _member(members, part, tag_key)
                continue
            part = parts.pop(0)
            if _is_model(hint):
                fields = {f.alias or n: f for n, f in hint.model_fields.items()}
                fields.update({n: f for n, f in hint.model_fields.items()})
                field = fields.get(str(part))
                if field is None:
                    path.known = list(dict.fromkeys(f.alias or n for n, f in hint.model_fields.items()))
                    hint = None
                else:
                    hint = _field_hint(field)
            elif typing.get_origin(hint) in (list, tuple, set, frozenset):
                args = typing.get_args(hint)
                hint = args[0] if args else None
            elif typing.get_origin(hint) is dict:
                args = typing.get_args(hint) or (None, None)
                if parts and parts[0] == "[key]":  # the key itself is wrong, not its value
                    parts.pop(0)
                    hint = args[0]
                else:
                    hint = args[1]
            else:
                hint = None
            path.loc = (*path.loc, part)
        chosen = chosen_by(hint)
        hint, tag_key = _unwrap(hint)
        if chosen is not None:
            path.tags = chosen.tags()
        elif tag_key is not None:
            path.tags = [str(tag) for member in _union_members(hint) or ()
                         for tag in _tags(_unwrap(member)[0], tag_key)]
        return path


@runtime_checkable
class ChosenByKey(Protocol):
    """``Annotated`` metadata of a table whose model one of its keys chooses, each made when
    first named (:class:`edge.config.section.SectionByType`, ``[boards.NAME]`` by its
    ``type``): an error inside the table has the key's value in its location, as a tagged
    union's has."""

    def member(self, kind: object) -> Any:
        """The model of the tables whose key is ``kind``; None when there is none."""

    def tags(self) -> list[str]:
        """Every value the key may have, in order."""


def chosen_by(hint: Any) -> ChosenByKey | None:
    """The lookup of a table its key chooses, if ``hint`` is annotated with one."""
    while typing.get_origin(hint) is typing.Annotated:
        hint, *metadata = typing.get_args(hint)
        for meta in metadata:
            if isinstance(meta, ChosenByKey):
                return meta
    return None


def _unwrap(hint: Any) -> tuple[Any, str | None]:
    """``hint`` without Annotated, and the key its union is chosen by, if it is tagged."""
    tag_key = None
    while typing.get_origin(hint) is typing.Annotated:
        hint, *metadata = typing.get_args(hint)
        for meta in metadata:
            tag_key = tag_key or _discriminator_key(meta)
    return hint, tag_key


def _discriminator_key(meta: Any) -> str | None:
    key = getattr(meta, "discriminator", None)
    return getattr(key, "discriminator", key) if not isinstance(key, str) else key


def _union_members(hint: Any) -> list[Any] | None:
    """The members of a union other than None; None when ``hint`` is no union."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return None
    return [m for m in typing.get_args(hint) if m is not type(None)]


def _member(members: list[Any], label: str | int, tag_key: str | None) -> Any:
    """The member a location's union part names: by its tag, or by its class name."""
    for member in members:
        inner, _ = _unwrap(member)
        if tag_key is not None and label in _tags(inner, tag_key):
            return member
        if tag_key is None and _is_model(inner) and inner.__name__ == label:
            return member
    return None


def _tags(model: Any, key: str) -> tuple[Any, ...]:
    """The values of ``model``'s ``key`` field (``type: Literal["bme280"]``)."""
    field = model.model_fields.get(key) if _is_model(model) else None
    return typing.get_args(field.annotation) if field is not None else ()


def _field_hint(field: Any) -> Any:
    """A field's annotation, with its discriminator kept when it has one."""
    tagged = [m for m in field.metadata if _discriminator_key(m)]
    if field.discriminator is not None:
        tagged.append(field)
    return typing.Annotated[(field.annotation, *tagged)] if tagged else field.annotation


def _is_model(hint: Any) -> bool:
    return isinstance(hint, type) and hasattr(hint, "model_fields") and hasattr(hint, "model_validate")


def where_of(error: ErrorDetails) -> str:
    """An error's location as a dotted path, for logs (union tags left in)."""
    return ".".join(str(part) for part in error["loc"])
