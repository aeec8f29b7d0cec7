"""Tool parameter schemas cleaned per provider.

| keyword               | gemini             | anthropic | openai | conservative        |
|-----------------------|--------------------|-----------|--------|---------------------|
| minLength, pattern... | removed            | removed   | kept   | removed             |
| $ref                  | inlined            | inlined   | kept   | inlined             |
| additionalProperties  | removed            | kept      | kept   | kept                |
| anyOf / oneOf         | first non-null     | kept      | kept   | first non-null      |
| nullable unions       | ``nullable: true`` | kept      | kept   | the non-null type   |

Gemini is the strictest: it takes an OpenAPI subset, so it is cleaned by an allowlist. The
conservative strategy is for endpoints we know nothing about.

>>> SchemaCleanr.clean({"type": ["string", "null"], "minLength": 1}, "gemini")
{'type': 'string', 'nullable': True}
"""

from __future__ import annotations

import copy
from typing import Any, Literal

Strategy = Literal["gemini", "anthropic", "openai", "conservative"]

STRING_CONSTRAINTS = frozenset({"minLength", "maxLength", "pattern", "format", "contentEncoding",
                                "contentMediaType"})
META_KEYWORDS = frozenset({"$schema", "$id", "$comment", "$defs", "definitions", "examples"})
GEMINI_KEYWORDS = frozenset({"type", "format", "description", "nullable", "enum", "properties",
                             "required", "items", "minItems", "maxItems", "minimum", "maximum"})
GEMINI_FORMATS = {"string": {"enum", "date-time"}, "integer": {"int32", "int64"},
                  "number": {"float", "double"}}
MAX_REF_DEPTH = 8


class SchemaCleanr:
    """Stateless: ``SchemaCleanr.clean(schema, strategy)`` returns a cleaned copy."""

    @staticmethod
    def clean(schema: dict[str, Any], strategy: Strategy) -> dict[str, Any]:
        if strategy == "openai":
            return copy.deepcopy(schema)
        definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}
        return _clean_object(schema, strategy, definitions, 0)

    @staticmethod
    def clean_for_gemini(schema: dict[str, Any]) -> dict[str, Any]:
        return SchemaCleanr.clean(schema, "gemini")

    @staticmethod
    def clean_for_anthropic(schema: dict[str, Any]) -> dict[str, Any]:
        return SchemaCleanr.clean(schema, "anthropic")

    @staticmethod
    def clean_for_openai(schema: dict[str, Any]) -> dict[str, Any]:
        return SchemaCleanr.clean(schema, "openai")


def _resolve_ref(ref: str, definitions: dict[str, Any]) -> dict[str, Any]:
    name = ref.rsplit("/", 1)[-1]
    target = definitions.get(name)
    return target if isinstance(target, dict) else {}


def _clean_node(node: Any, strategy: Strategy, definitions: dict[str, Any], depth: int) -> Any:
    if isinstance(node, list):
        return [_clean_node(item, strategy, definitions, depth) for item in node]
    if not isinstance(node, dict):
        return node
    return _clean_object(node, strategy, definitions, depth)


def _clean_object(node: dict[str, Any], strategy: Strategy, definitions: dict[str, Any],
                  depth: int) -> dict[str, Any]:
    if "$ref" in node:
        if depth >= MAX_REF_DEPTH:  # a recursive definition: stop with an open object
            return {"type": "object", "description": node.get("description", "")}
        target = _resolve_ref(node["$ref"], definitions)
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean_object(merged, strategy, definitions, depth + 1)
    node = _collapse_unions(node, strategy)
    if "$ref" in node:  # a union or allOf whose chosen branch is a reference
        return _clean_object(node, strategy, definitions, depth)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in META_KEYWORDS:
            continue
        if key in STRING_CONSTRAINTS and key != "format" or (key == "format" and strategy != "gemini"):
            continue
        if strategy == "gemini" and key not in GEMINI_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean_node(prop, strategy, definitions, depth)
                        for name, prop in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "not", "additionalProperties"):
            out[key] = _clean_node(value, strategy, definitions, depth)
        else:
            out[key] = copy.deepcopy(value)
    if strategy == "gemini":
        _gemini_finish(out)
    return out


def _collapse_unions(node: dict[str, Any], strategy: Strategy) -> dict[str, Any]:
    """Merge a one-item ``allOf``; rewrite ``anyOf``/``oneOf``/type lists where not supported."""
    node = dict(node)
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        del node["allOf"]
        node = {**all_of[0], **node}
    if strategy not in ("gemini", "conservative"):
        return node
    nullable = False
    types = node.get("type")
    if isinstance(types, list):
        nullable = "null" in types
        concrete = [t for t in types if t != "null"]
        node["type"] = concrete[0] if concrete else "string"
    for key in ("anyOf", "oneOf"):
        options = node.pop(key, None)
        if not isinstance(options, list):
            continue
        concrete = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        nullable = nullable or len(concrete) < len(options)
        if concrete and isinstance(concrete[0], dict):
            node = {**concrete[0], **node}
    if "const" in node:
        node.setdefault("enum", [node.pop("const")])
    if nullable and strategy == "gemini":
        node["nullable"] = True
    return node


def _gemini_finish(node: dict[str, Any]) -> None:
    fmt = node.get("format")
    if fmt is not None and fmt not in GEMINI_FORMATS.get(node.get("type", ""), set()):
        del node["format"]
    if "enum" in node:  # Gemini takes enums of strings only
        node["enum"] = [str(v) for v in node["enum"] if v is not None]
        node["type"] = "string"
    if node.get("type") == "object" and "required" in node:
        present = set(node.get("properties", {}))
        node["required"] = [r for r in node["required"] if r in present]
