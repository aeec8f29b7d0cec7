"""Memory context: scopes, relevance and content filters, size limits, quoting; also against the
real SQLite memory."""

from __future__ import annotations

from dataclasses import dataclass

from edge.agent.memory_context import build_memory_context
from edge.channels.base import ChannelMessage
from edge.memory.base import Category
from edge.memory.embedders import NoopEmbedding
from edge.memory.sqlite import SqliteMemory


@dataclass
class Entry:
    key: str
    content: str
    score: float
    session_id: str | None = None


class Store:
    def __init__(self, entries):
        self.entries = entries
        self.asked = []

    async def recall(self, query, limit=5, session_id=None, *, scopes=None):
        self.asked.append((query, limit, session_id, scopes))
        return self.entries[:limit]


async def test_filters_and_limits():
    entries = [Entry("low", "irrelevant", 0.2), Entry("img", "see [IMAGE:/x.png]", 0.9),
               Entry("tool", "<tool_result>x</tool_result>", 0.9), Entry("chat_history", "h", 0.9),
               Entry("huge", "x" * 5000, 0.9)] + [Entry(f"k{i}", "y" * 1000, 0.8) for i in range(6)]
    store = Store(entries)
    text = await build_memory_context(store, ChannelMessage("alice", "alice", "pump?", "cli"))
    lines = text.splitlines()
    assert lines[0] == "<recalled_memory>" and lines[-1] == "</recalled_memory>"
    assert [line.split(" ")[1] for line in lines[1:-1]] == ["k0", "k1", "k2", "k3"]
    assert all(len(line) <= 800 + len('- k0 (shared): ""') for line in lines[1:-1])
    assert store.asked == [("pump?", 20, None, frozenset({None, "cli:alice"}))]


async def test_scopes_sender_group_and_unscoped_only():
    msg = ChannelMessage("alice", "group1", "pump?", "telegram", is_group=True, mentioned=True)
    store = Store([Entry("core", "the pump is on GPIO22", 0.9),
                   Entry("mine", "alice waters at 7", 0.8, "telegram:alice"),
                   Entry("group", "group note", 0.7, msg.conversation_key),
                   Entry("bobs", "bob's secret", 0.95, "telegram:bob")])
    text = await build_memory_context(store, msg)
    assert "the pump is on GPIO22" in text and "alice waters" in text and "group note" in text
    assert "bob's secret" not in text


async def test_no_memory_or_failing_memory_gives_no_context():
    class Broken:
        async def recall(self, query, limit=5, session_id=None, *, scopes=None):
            raise OSError("database is locked")

    msg = ChannelMessage("a", "a", "q", "cli")
    assert await build_memory_context(None, msg) == ""
    assert await build_memory_context(Broken(), msg) == ""


async def test_with_the_sqlite_memory(tmp_path):
    memory = SqliteMemory(tmp_path / "brain.db", NoopEmbedding())
    await memory.store("wifi", "The wifi password is on the router", Category.CORE)
    await memory.store("cat", "Feed the cat twice a day", Category.CORE)
    await memory.store("other", "My wifi password guess is hunter2", Category.CONVERSATION, "cli:bob")
    msg = ChannelMessage("alice", "alice", "wifi password", "cli")
    assert await build_memory_context(memory, msg) == (
        '<recalled_memory>\n- wifi (shared): "The wifi password is on the router"\n</recalled_memory>')
    assert await build_memory_context(memory, ChannelMessage("a", "a", "quantum chromodynamics", "cli")) == ""
    await memory.close()
