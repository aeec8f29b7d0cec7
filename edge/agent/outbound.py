"""Outbound delivery: replies chunked to the channel's limit
keeping fenced code blocks whole, each chunk delivered with retry and exponential backoff.

>>> chunk_text("a" * 5, 10)
['aaaaa']
"""

from __future__ import annotations

import asyncio
import logging

from edge.channels.base import Channel, SendMessage

log = logging.getLogger(__name__)

DELIVERY_ATTEMPTS = 3
FENCE = "```"


def _blocks(text: str) -> list[str]:
    """Split into paragraphs and whole fenced code blocks."""
    blocks, current, in_code = [], [], False
    for line in text.split("\n"):
        if line.lstrip().startswith(FENCE):
            if in_code:
                current.append(line)
                blocks.append("\n".join(current))
                current, in_code = [], False
                continue
            if current:
                blocks.append("\n".join(current))
            current, in_code = [line], True
            continue
        if not in_code and line == "":
            if current:
                blocks.append("\n".join(current))
            current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return [b for b in blocks if b.strip()]


def _split_oversized(block: str, limit: int) -> list[str]:
    """A block longer than the limit: by lines (a code block is re-fenced in each piece)."""
    lines = block.split("\n")
    fence = lines[0].strip() if lines[0].lstrip().startswith(FENCE) else None
    if fence:
        lines = lines[1:-1] if lines[-1].strip().startswith(FENCE) else lines[1:]
    overhead = len(fence) + len(FENCE) + 2 if fence else 0
    room = max(1, limit - overhead)
    pieces, current = [], ""
    for line in lines:
        while len(line) > room:  # a single huge line
            if current:
                pieces.append(current)
                current = ""
            pieces.append(line[:room])
            line = line[room:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > room and current:
            pieces.append(current)
            current = line
        else:
            current = candidate
    if current:
        pieces.append(current)
    return [f"{fence}\n{p}\n{FENCE}" for p in pieces] if fence else pieces


def chunk_text(text: str, limit: int | None) -> list[str]:
    if not limit or len(text) <= limit:
        return [text]
    chunks, current = [], ""
    for block in _blocks(text):
        parts = [block] if len(block) <= limit else _split_oversized(block, limit)
        for part in parts:
            candidate = f"{current}\n\n{part}" if current else part
            if len(candidate) <= limit:
                current = candidate
            else:
                chunks.append(current)
                current = part
    if current:
        chunks.append(current)
    return chunks


async def deliver(channel: Channel, message: SendMessage, base_delay: float = 1.0) -> None:
    """Send ``message`` in chunks; each chunk is tried DELIVERY_ATTEMPTS times (1 s, 2 s backoff)."""
    for chunk in chunk_text(message.content, channel.max_message_length):
        part = SendMessage(chunk, message.recipient, message.thread_id)
        for attempt in range(DELIVERY_ATTEMPTS):
            try:
                await channel.send(part)
                break
            except Exception as exc:
                if attempt == DELIVERY_ATTEMPTS - 1:
                    raise
                delay = base_delay * 2 ** attempt
                log.warning("delivery_retry channel=%s to=%s attempt=%d error=%r delay=%.1fs",
                            channel.name, message.recipient, attempt + 1, exc, delay)
                await asyncio.sleep(delay)
