"""Conversation history hygiene before a model call:
same-role turns merged (providers need strict alternation), stale ``<tool_result>`` blocks
stripped, at most MAX_HISTORY_TURNS turns and a proactive trim
past PROACTIVE_TRIM_CHARS that never drops the current (last) turn."""

from __future__ import annotations

import re

from edge.core.messages import ChatMessage

MAX_HISTORY_TURNS = 50
PROACTIVE_TRIM_CHARS = 400_000
RAW_TAIL_TURNS = 4 * MAX_HISTORY_TURNS
"""Alternating turns merge rarely, so 200 stored turns still yield the 50 the model sees."""
TOOL_RESULT_BLOCK = re.compile(r"<tool_result\b[^>]*>.*?</tool_result>\s*", re.DOTALL)


def normalize_turns(turns: list[ChatMessage]) -> list[ChatMessage]:
    """Merge consecutive same-role turns with a blank line between them."""
    merged: list[ChatMessage] = []
    for turn in turns:
        if merged and merged[-1].role == turn.role:
            merged[-1] = ChatMessage(turn.role, f"{merged[-1].content}\n\n{turn.content}")
        else:
            merged.append(ChatMessage(turn.role, turn.content))
    return merged


def strip_tool_results(turns: list[ChatMessage]) -> list[ChatMessage]:
    cleaned = []
    for turn in turns:
        text = turn.content
        if "<tool_result" in text:
            text = TOOL_RESULT_BLOCK.sub("", text)
        if text := text.strip():
            cleaned.append(turn if text == turn.content else ChatMessage(turn.role, text))
    return cleaned


def proactive_trim(turns: list[ChatMessage], limit: int = PROACTIVE_TRIM_CHARS) -> list[ChatMessage]:
    """Drop the oldest turns until the total is within ``limit``; the last turn always stays."""
    total = sum(len(t.content) for t in turns)
    start = 0
    while total > limit and start < len(turns) - 1:
        total -= len(turns[start].content)
        start += 1
    return turns[start:]


def prepare_history(turns: list[ChatMessage]) -> list[ChatMessage]:
    """The history as it goes to the model: cleaned, merged, capped and trimmed. Only the last
    RAW_TAIL_TURNS stored turns are looked at, so a long-lived session costs no more per turn."""
    turns = normalize_turns(strip_tool_results(turns[-RAW_TAIL_TURNS:]))
    return proactive_trim(turns[-MAX_HISTORY_TURNS:])
