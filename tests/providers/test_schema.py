"""SchemaCleanr strategies (seed 002 table)."""

from edge.providers.schema import SchemaCleanr

SCHEMA = {
    "type": "object", "additionalProperties": False,
    "$defs": {"Mode": {"enum": ["in", "out"], "type": "string"}},
    "properties": {
        "pin": {"type": "string", "minLength": 1, "pattern": "^\\w+$", "format": "hostname"},
        "mode": {"$ref": "#/$defs/Mode", "description": "direction"},
        "duty": {"anyOf": [{"type": "number", "maximum": 1}, {"type": "null"}], "default": None},
        "tags": {"type": "array", "items": {"type": ["string", "null"]}},
        "kind": {"const": 3},
    },
    "required": ["pin", "mode", "gone"],
}


def test_openai_keeps_everything():
    assert SchemaCleanr.clean_for_openai(SCHEMA) == SCHEMA


def test_anthropic_inlines_refs_and_drops_string_constraints_but_keeps_unions():
    cleaned = SchemaCleanr.clean_for_anthropic(SCHEMA)
    assert "$defs" not in cleaned and cleaned["additionalProperties"] is False
    assert cleaned["properties"]["pin"] == {"type": "string"}
    assert cleaned["properties"]["mode"] == {"enum": ["in", "out"], "type": "string",
                                             "description": "direction"}
    assert cleaned["properties"]["duty"]["anyOf"][1] == {"type": "null"}


def test_gemini_is_strict_and_rewrites_nullable_unions():
    cleaned = SchemaCleanr.clean_for_gemini(SCHEMA)
    props = cleaned["properties"]
    assert "additionalProperties" not in cleaned
    assert props["pin"] == {"type": "string"}
    assert props["mode"] == {"type": "string", "enum": ["in", "out"], "description": "direction"}
    assert props["duty"] == {"type": "number", "maximum": 1, "nullable": True}
    assert props["tags"]["items"] == {"type": "string", "nullable": True}
    assert props["kind"] == {"type": "string", "enum": ["3"]}
    assert cleaned["required"] == ["pin", "mode"]  # names without a property are dropped


def test_conservative_flattens_unions_without_nonstandard_keywords():
    props = SchemaCleanr.clean(SCHEMA, "conservative")["properties"]
    assert props["duty"] == {"type": "number", "maximum": 1, "default": None}
    assert "nullable" not in props["tags"]["items"]


def test_recursive_refs_stop_at_a_bounded_depth():
    schema = {"$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
              "$ref": "#/$defs/Node"}
    cleaned = SchemaCleanr.clean(schema, "gemini")
    depth = 0
    while "properties" in cleaned:
        cleaned, depth = cleaned["properties"]["next"], depth + 1
    assert 0 < depth <= 9 and cleaned["type"] == "object"
