"""``docs/reference/configuration.md``: every config key, from :class:`edge.config.Config` and
the sections under it, with its type, default and the docstring written under the field.

A table is a section model; ``dict[str, Model]`` is a table per name (``[sensors.NAME]``), a list of
models an array of tables (``[[rules]]``), and a union tagged by ``type`` (or a section its ``type``
chooses, :class:`edge.config.section.SectionByType`) one table per type.
"""

from __future__ import annotations

import ast
import enum
import inspect
import json
import re
import textwrap
import types
from collections.abc import Iterator
from pathlib import PurePath
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from edge.config.model import Config
from edge.core.validation import chosen_by

TITLE = "# Configuration keys"
INTRO = ("Every key of `config.toml`, with its type, its default (what the agent uses when the key "
         "is absent) and what it does. Any key can also be set in the environment: "
         "`EDGE_<SECTION>__<KEY>` (`EDGE_CHANNELS__TELEGRAM__BOT_TOKEN`). `edge-cli config check` "
         "names the key of each problem; `edge-cli config init` writes a commented example.")
CODE = re.compile(r"(`+[^`]*`+)")
"""A code span, whose text is shown as written."""
TAG = re.compile(r"<(?=[A-Za-z/!])")
"""What Markdown would take for the start of an HTML tag."""
BOUNDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<", "min_length": "length >=",
          "max_length": "length <="}
SCALARS = {int: "integer", float: "number", str: "text", bool: "true or false",
           SecretStr: "text (secret)"}


def markdown() -> str:
    lines = [TITLE, "", INTRO]
    for table, model, note in tables("", Config):
        if not model.model_fields:
            continue
        lines += ["", f"## `{table}`", ""]
        summary = first_paragraph(model.__doc__)
        if note or summary:
            lines += [" ".join(part for part in (note, summary) if part), ""]
        rows = [row for row in field_rows(model)]
        if rows:
            lines += ["| key | type | default | what |", "|---|---|---|---|", *rows]
    return "\n".join(lines) + "\n"


def tables(path: str, model: type[BaseModel], note: str = "") -> Iterator[tuple[str, type[BaseModel], str]]:
    """(TOML table header, its model, a note) for ``model`` at ``path`` and every table below it."""
    if path:
        yield path, model, note
    for name, info in model.model_fields.items():
        key = f"{path.strip('[]')}.{name}" if path else name
        yield from tables_of(key, info.annotation)


def tables_of(key: str, annotation: Any) -> Iterator[tuple[str, type[BaseModel], str]]:
    annotation = unwrapped(annotation)
    origin = get_origin(annotation)
    if is_model(annotation):
        yield from tables(f"[{key}]", annotation)
    elif origin is dict and len(get_args(annotation)) == 2:
        for variant, note in variants(get_args(annotation)[1]):
            yield from tables(f"[{key}.NAME]", variant, note)
    elif origin is list and get_args(annotation):
        for variant, note in variants(get_args(annotation)[0]):
            yield from tables(f"[[{key}]]", variant, note)
    elif is_union(annotation):
        models = [a for a in get_args(annotation) if is_model(unwrapped(a))]
        if len(models) == 1:
            yield from tables(f"[{key}]", unwrapped(models[0]))


def variants(annotation: Any) -> list[tuple[type[BaseModel], str]]:
    chosen = chosen_by(annotation)
    annotation = unwrapped(annotation)
    if chosen is not None:
        members: list[Any] = [chosen.member(kind) for kind in chosen.tags()]
    elif is_model(annotation):
        return [(annotation, "")]
    elif is_union(annotation):
        members = [unwrapped(member) for member in get_args(annotation)]
    else:
        return []
    found = []
    for member in members:
        if is_model(member):
            tag = member.model_fields.get("type")
            words = f'With `type = "{tag.default}"`.' if tag and isinstance(tag.default, str) else ""
            found.append((member, words))
    return found


def field_rows(model: type[BaseModel]) -> Iterator[str]:
    docs = attribute_docs(model)
    for name, info in model.model_fields.items():
        annotation = unwrapped(info.annotation)
        if is_model(annotation) or get_origin(annotation) in (dict, list) and variants(
                get_args(annotation)[-1] if get_args(annotation) else None):
            continue  # a table of its own, listed under its header
        if is_union(annotation) and any(is_model(unwrapped(a)) for a in get_args(annotation)):
            continue
        yield (f"| `{name}` | {cell(type_words(info.annotation) + bounds(info))} | {default_words(info)} "
               f"| {cell(docs.get(name) or info.description or '')} |")


def attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """Field name -> the string written under it, from ``model`` and its bases (the nearest wins)."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        try:
            source = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):
            continue  # a model made at run time: its fields come from its bases
        body = ast.parse(source).body[0]
        if not isinstance(body, ast.ClassDef):
            continue
        for field, after in zip(body.body, body.body[1:], strict=False):
            if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) \
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) \
                    and isinstance(after.value.value, str):
                docs[field.target.id] = " ".join(inspect.cleandoc(after.value.value).split())
    return docs


def type_words(annotation: Any) -> str:
    annotation = unwrapped(annotation)
    origin = get_origin(annotation)
    if origin is Literal:
        return " or ".join(f"`{json.dumps(value, ensure_ascii=False)}`" for value in get_args(annotation))
    if is_union(annotation):
        parts = [type_words(a) for a in get_args(annotation) if a is not type(None)]
        return " or ".join(dict.fromkeys(parts))
    if origin in (list, tuple, set, frozenset):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        return f"list of {type_words(args[0])}" if args else "list"
    if origin is dict:
        return f"table of {type_words(get_args(annotation)[1])}" if get_args(annotation) else "table"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " or ".join(f"`{json.dumps(member.value)}`" for member in annotation)
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return "path"
    if is_model(annotation):
        return "table"
    return SCALARS.get(annotation, getattr(annotation, "__name__", str(annotation)))


def bounds(info: FieldInfo) -> str:
    found = [f"{word} {getattr(meta, key)}" for meta in info.metadata for key, word in BOUNDS.items()
             if getattr(meta, key, None) is not None]
    return f" ({', '.join(found)})" if found else ""


def default_words(info: FieldInfo) -> str:
    if info.default is PydanticUndefined:
        if info.default_factory is None:
            return "required"
        value = info.default_factory()  # type: ignore[call-arg]
        return f"`{shown(value)}`" if value in ([], {}, (), set(), frozenset()) else "computed at start"
    return "" if info.default is None else f"`{shown(info.default)}`"


def shown(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, SecretStr):
        return '""'
    if isinstance(value, (set, frozenset, tuple)):
        value = sorted(value, key=str)
    if isinstance(value, PurePath):
        value = str(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:
        return str(value)


def unwrapped(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())


def cell(text: str) -> str:
    """``text`` in a table's cell: no column bar, and a ``<placeholder>`` outside code is shown,
    not taken for an HTML tag."""
    parts = CODE.split(text.replace("|", "\\|"))
    return "".join(part if part.startswith("`") else TAG.sub("&lt;", part) for part in parts)
