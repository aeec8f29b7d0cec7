"""The <tool_call> protocol: instructions, parsing, history rendering, stream filtering."""

import json

from edge.core.messages import ChatMessage, ToolCall, ToolSpec
from edge.providers.prompt_guided import GuidedTextFilter, parse_tool_calls, render_guided, tool_instructions

SPEC = ToolSpec("pins", "List pins.", {"type": "object", "properties": {}})


def test_parser_tolerates_fences_string_arguments_and_a_missing_close_tag():
    text, calls = parse_tool_calls(
        'A <tool_call>```json\n{"name": "pins", "arguments": "{\\"all\\": true}"}\n```</tool_call>'
        ' B <tool_call>{"name": "gpio_read", "parameters": {"pin": "led"}}')
    assert text == "A  B"
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("pins", {"all": True}), ("gpio_read", {"pin": "led"})]
    assert len({c.id for c in calls}) == 2


def test_a_block_that_is_not_a_call_stays_in_the_text():
    text, calls = parse_tool_calls("see <tool_call>not json</tool_call>")
    assert calls == [] and text == "see <tool_call>not json</tool_call>"


def test_render_puts_instructions_in_the_system_prompt_and_tool_turns_in_text():
    history = [ChatMessage.system("Base."), ChatMessage.user("pins?"),
               ChatMessage.assistant("", [ToolCall("c1", "pins", "{}"), ToolCall("c2", "pins", "{}")]),
               ChatMessage.tool("c1", "led off"), ChatMessage.tool("c2", "button up")]
    out = render_guided(history, [SPEC])
    assert [m.role for m in out] == ["system", "user", "assistant", "user"]
    assert out[0].content.startswith("Base.") and "**pins**" in out[0].content
    assert out[2].content.count("<tool_call>") == 2 and not out[2].tool_calls
    assert '<tool_result name="pins">\nled off' in out[3].content and "button up" in out[3].content
    assert render_guided([ChatMessage.user("x")], [SPEC])[0].content == tool_instructions([SPEC])


def test_filter_holds_back_tags_split_across_pieces():
    shown = GuidedTextFilter()
    pieces = ["Sure", ". <to", 'ol_call>{"name": "pins"}</tool', "_call> done", " <", "b>"]
    assert "".join(shown.feed(p) for p in pieces) == "Sure.  done <b>"
