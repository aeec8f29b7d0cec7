"""Memory context: dual scope, relevance and content filters, size limits."""

from __future__ import annotations

from dataclasses import dataclass

from edge.agent.memory_context import build_memory_context
from edge.channels.base import ChannelMessage


@dataclass
class Entry:
    key: str
    content: str
    score: float


class Store:
    def __init__(self, by_scope):
        self.by_scope = by_scope
        self.asked = []

    async def recall(self, query, limit=5, session_id=None):
        self.asked.append((query, limit, session_id))
        return self.by_scope.get(session_id, [])


async def test_filters_and_limits():
    entries = [Entry("low", "irrelevant", 0.2), Entry("img", "see [IMAGE:/x.png]", 0.9),
               Entry("tool", "<tool_result>x</tool_result>", 0.9), Entry("chat_history", "h", 0.9),
               Entry("huge", "x" * 5000, 0.9)] + [Entry(f"k{i}", "y" * 1000, 0.8) for i in range(6)]
    store = Store({"cli:alice": entries})
    text = await build_memory_context(store, ChannelMessage("alice", "alice", "pump?", "cli"))
    lines = text.splitlines()
    assert lines[0] == "[Memory context]"
    assert [line.split(":")[0] for line in lines[1:]] == ["- k0", "- k1", "- k2", "- k3"]
    assert all(len(line) <= 800 + len("- k0: ") for line in lines[1:])
    assert store.asked == [("pump?", 5, "cli:alice")]


async def test_groups_recall_for_sender_and_group_without_duplicates():
    shared = Entry("fact", "the pump is on GPIO22", 0.9)
    msg = ChannelMessage("alice", "group1", "pump?", "telegram", is_group=True, mentioned=True)
    store = Store({"telegram:alice": [shared], msg.conversation_key: [shared, Entry("g", "group note", 0.7)]})
    text = await build_memory_context(store, msg)
    assert text.count("the pump is on GPIO22") == 1 and "group note" in text
    assert [scope for _, _, scope in store.asked] == ["telegram:alice", msg.conversation_key]


async def test_no_memory_or_failing_memory_gives_no_context():
    class Broken:
        async def recall(self, query, limit=5, session_id=None):
            raise OSError("database is locked")

    msg = ChannelMessage("a", "a", "q", "cli")
    assert await build_memory_context(None, msg) == ""
    assert await build_memory_context(Broken(), msg) == ""
