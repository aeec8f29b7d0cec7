"""Autosave of user messages and the recalled context block the pipeline puts before a message."""

from edge.memory.base import Category
from edge.memory.conversation import autosave_user_message, recall_context
from edge.memory.embedders import NoopEmbedding
from edge.memory.sqlite import SqliteMemory


async def test_autosave_keeps_long_messages_under_unique_keys(memory):
    text = "please water the tomatoes at seven"
    first = await autosave_user_message(memory, text, "telegram:42", session_id="telegram:42")
    second = await autosave_user_message(memory, text, "telegram:42")
    assert first != second and first.startswith("user_msg_telegram:42_")
    assert await autosave_user_message(memory, "thanks!", "telegram:42") is None   # < 20 chars
    saved = await memory.get(first)
    assert (saved.category, saved.session_id) == (Category.CONVERSATION, "telegram:42")
    assert await memory.count() == 2


async def test_recall_context_formats_relevant_memories(memory):
    await memory.store("wifi", "The wifi password is on the router", Category.CORE)
    await memory.store("cat", "Feed the cat twice a day", Category.CORE)
    block = await recall_context(memory, "what is the internet password")
    assert block == "[Memory context]\n- wifi: The wifi password is on the router\n"
    assert await recall_context(memory, "quantum chromodynamics") == ""


async def test_a_failing_memory_yields_no_context_and_no_exception(tmp_path):
    broken = SqliteMemory(tmp_path / "not-a-dir" / "x.db", NoopEmbedding())
    (tmp_path / "not-a-dir").write_text("a file where a directory should be")
    assert await recall_context(broken, "anything at all here") == ""
    assert await autosave_user_message(broken, "a message long enough to save", "cli:pi") is None
