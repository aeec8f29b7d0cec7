"""The context window: guard, token estimate, pruning, overflow detection and compaction.

- Guard: a window under CONTEXT_HARD_MIN_TOKENS blocks model calls, under CONTEXT_WARN_TOKENS warns.
- Estimate: about four characters a token, times SAFETY_MARGIN.
- Prune: before each call, history is cut to ``history_share`` of the window, oldest chunks first,
  never the current turn.
- Overflow: the provider decides (``Provider.is_context_overflow``); its default is the provider
  layer's one phrase list, provider-specific wording included.
- Compaction: summarise through the model, in stages for large histories; when that fails, keep
  the last COMPACT_KEEP_TURNS turns truncated to COMPACT_TURN_CHARS.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from edge.core.messages import ChatMessage
from edge.providers.base import Provider, ProviderError, mentions_context_overflow

log = logging.getLogger(__name__)

CONTEXT_HARD_MIN_TOKENS = 16_000
CONTEXT_WARN_TOKENS = 32_000
SAFETY_MARGIN = 1.2
CHARS_PER_TOKEN = 4
COMPACT_KEEP_TURNS = 12
COMPACT_TURN_CHARS = 600
STAGED_SUMMARY_TOKENS = 8_000


COMPACT_MIN_TOKENS = 4_096
"""The minimum for the compact profile's turns (:mod:`edge.agent.compact`): Ollama's default
``num_ctx`` on a Pi holds its first call (under 1,000 tokens) and a short history."""


@dataclass(frozen=True)
class GuardResult:
    tokens: int
    should_warn: bool
    should_block: bool
    minimum: int = CONTEXT_HARD_MIN_TOKENS


def evaluate_guard(tokens: int, *, compact: bool = False) -> GuardResult:
    """Whether a window of ``tokens`` is too small (``compact``: for the compact profile)."""
    if compact:
        return GuardResult(tokens, tokens < 2 * COMPACT_MIN_TOKENS, tokens < COMPACT_MIN_TOKENS,
                           COMPACT_MIN_TOKENS)
    return GuardResult(tokens, tokens < CONTEXT_WARN_TOKENS, tokens < CONTEXT_HARD_MIN_TOKENS)


def estimate_tokens(messages: list[ChatMessage]) -> int:
    chars = sum(len(m.content) + 16 for m in messages)
    return math.ceil(chars / CHARS_PER_TOKEN * SAFETY_MARGIN)


def prune_to_share(history: list[ChatMessage], window_tokens: int, share: float = 0.5,
                   chunks: int = 2) -> tuple[list[ChatMessage], int]:
    """Drop the oldest chunks until the history fits ``share`` of the window; returns
    (kept turns, dropped turn count). The current (last) turn is always kept."""
    budget = int(window_tokens * share)
    kept = list(history)
    dropped = 0
    while len(kept) > 1 and estimate_tokens(kept) > budget:
        size = max(1, min(len(kept) - 1, math.ceil(len(kept) / (chunks * 2))))
        kept = kept[size:]
        dropped += size
    return kept, dropped


def is_context_overflow(error: Exception, provider: Provider | None = None) -> bool:
    """Whether ``error`` means the prompt did not fit: ``provider``'s judgement, else the
    provider layer's phrase list."""
    if provider is None:
        return mentions_context_overflow(error)
    return provider.is_context_overflow(error)


def fallback_compaction(history: list[ChatMessage]) -> list[ChatMessage]:
    """Keep the last 12 turns, each truncated to 600 characters."""
    return [ChatMessage(t.role, t.content[:COMPACT_TURN_CHARS])
            for t in history[-COMPACT_KEEP_TURNS:]]


SUMMARY_PROMPT = ("Summarise this conversation for your own future reference: decisions, facts, "
                  "pin states and open requests. Be concise; no preamble.")


def _transcript(turns: list[ChatMessage]) -> str:
    return "\n".join(f"{t.role}: {t.content}" for t in turns)


async def _summarise(provider: Provider, turns: list[ChatMessage], previous: str) -> str:
    text = _transcript(turns)
    if previous:
        text = f"Earlier summary:\n{previous}\n\nConversation:\n{text}"
    reply = await provider.chat([ChatMessage.system(SUMMARY_PROMPT), ChatMessage.user(text)])
    if not reply.text.strip():
        raise ProviderError("empty summary")
    return reply.text.strip()


async def summarise_in_stages(provider: Provider, turns: list[ChatMessage], previous: str = "",
                              stage_tokens: int = STAGED_SUMMARY_TOKENS) -> str:
    """Summarise; a history larger than ``stage_tokens`` is split in two by token share,
    each half summarised, and the partial summaries merged."""
    if estimate_tokens(turns) <= stage_tokens or len(turns) < 4:
        return await _summarise(provider, turns, previous)
    middle = len(turns) // 2
    first = await summarise_in_stages(provider, turns[:middle], previous, stage_tokens)
    return await summarise_in_stages(provider, turns[middle:], first, stage_tokens)


async def compact(provider: Provider, history: list[ChatMessage], previous_summary: str = ""
                  ) -> tuple[str, list[ChatMessage]]:
    """(summary, kept turns). Keeps the current turn; falls back to truncation on failure."""
    older, current = history[:-1], history[-1:]
    try:
        summary = await summarise_in_stages(provider, older, previous_summary)
        return summary, current
    except ProviderError as exc:
        log.warning("compaction_summary_failed error=%s; keeping last %d turns truncated",
                    exc, COMPACT_KEEP_TURNS)
        return previous_summary, fallback_compaction(history)
