"""Each pipeline step on its own: history, context window, sanitising, chunking, debounce,
preflight, hooks."""

from __future__ import annotations

import asyncio

import pytest

from edge.agent import context
from edge.agent.debounce import InboundDebouncer
from edge.agent.history import PROACTIVE_TRIM_CHARS, prepare_history, proactive_trim
from edge.agent.hooks import Cancel, Hook, HookRunner
from edge.agent.outbound import chunk_text, deliver
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sanitize import sanitize_response
from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.providers.base import ChatMessage, ChatResponse, ProviderError
from tests.helpers import msg


def turns(*pairs):
    return [ChatMessage(role, text) for role, text in pairs]


# history ------------------------------------------------------------------------------------

def test_history_merges_strips_and_caps():
    history = turns(("user", "a"), ("user", "b"), ("assistant", 'x <tool_result name="t">big</tool_result> y'),
                    ("assistant", "<tool_result>only</tool_result>"))
    assert [(t.role, t.content) for t in prepare_history(history)] == [("user", "a\n\nb"), ("assistant", "x y")]
    many = [ChatMessage("user" if i % 2 == 0 else "assistant", str(i)) for i in range(120)]
    assert len(prepare_history(many)) == 50 and prepare_history(many)[-1].content == "119"


def test_proactive_trim_never_drops_the_current_turn():
    big = "x" * (PROACTIVE_TRIM_CHARS // 2 + 1)
    kept = proactive_trim(turns(("user", big), ("assistant", big), ("user", "now")))
    assert [t.content for t in kept] == [big, "now"]
    huge = proactive_trim(turns(("user", "old"), ("user", "y" * (PROACTIVE_TRIM_CHARS + 5))))
    assert len(huge) == 1 and huge[0].content.startswith("y")


# context window -----------------------------------------------------------------------------

def test_guard_thresholds():
    assert context.evaluate_guard(15_999).should_block
    assert context.evaluate_guard(20_000).should_warn and not context.evaluate_guard(20_000).should_block
    assert not context.evaluate_guard(32_000).should_warn


def test_prune_to_share_drops_oldest_and_keeps_current():
    history = [ChatMessage("user" if i % 2 == 0 else "assistant", "w" * 4000) for i in range(21)]
    kept, dropped = context.prune_to_share(history, window_tokens=20_000, share=0.5)
    assert dropped > 0 and kept[-1] is history[-1]
    assert context.estimate_tokens(kept) <= 10_000
    single, _ = context.prune_to_share(history[-1:], window_tokens=1_000)
    assert single == history[-1:]


@pytest.mark.parametrize("text", [
    "This model's maximum context length is 4096 tokens", "prompt is too long: 250000 tokens",
    "The context window has overflowed, summarizing...", "input is too long for requested model"])
def test_overflow_phrases(text):
    assert context.is_context_overflow(ProviderError(text))


def test_overflow_provider_hook():
    class Provider:
        def is_context_overflow(self, error):
            return "E_CTX" in str(error)

    assert context.is_context_overflow(ProviderError("E_CTX"), Provider())
    assert not context.is_context_overflow(ProviderError("rate limited"), Provider())


async def test_staged_summary_splits_large_histories():
    calls = []

    class Summariser:
        async def chat(self, messages, tools=None):
            calls.append(messages[1].content)
            return ChatResponse(f"summary{len(calls)}")

    history = [ChatMessage("user" if i % 2 == 0 else "assistant", "z" * 1000) for i in range(8)]
    summary = await context.summarise_in_stages(Summariser(), history, stage_tokens=1_500)
    assert len(calls) > 1 and summary == f"summary{len(calls)}"
    assert calls[1].startswith("Earlier summary:\nsummary1")


# sanitising ---------------------------------------------------------------------------------

@pytest.mark.parametrize("raw,clean", [
    ('Hi <tool_call>{"name":"x","arguments":{}}</tool_call>there', "Hi there"),
    ("<toolcall>junk</toolcall>ok", "ok"), ("<tool-call>j</tool-call>ok", "ok"),
    ('<invoke name="x">j</invoke>ok', "ok"), ('{"name": "gpio_read", "arguments": {"pin": "led"}}\nDone', "Done"),
    ("Values: {\"a\": 1}", "Values: {\"a\": 1}"), ("unclosed <tool_call>{...", "unclosed"),
])
def test_sanitize(raw, clean):
    assert sanitize_response(raw) == clean


# outbound -----------------------------------------------------------------------------------

def test_chunks_respect_the_limit_and_keep_code_blocks_whole():
    code = "```python\n" + "\n".join(f"print({i})" for i in range(40)) + "\n```"
    text = "Intro paragraph.\n\n" + code + "\n\nOutro."
    chunks = chunk_text(text, 200)
    assert all(len(c) <= 200 for c in chunks)
    for c in chunks:
        assert c.count("```") % 2 == 0
    body = [line for c in chunks for line in c.splitlines() if line.startswith("print(")]
    assert body == [f"print({i})" for i in range(40)]
    small = chunk_text("para one\n\n```\ncode\n```\n\npara two", 4096)
    assert small == ["para one\n\n```\ncode\n```\n\npara two"]


def test_telegram_limit_chunking():
    text = "\n\n".join("word " * 150 for _ in range(20))
    chunks = chunk_text(text, 4096)
    assert len(chunks) > 1 and all(len(c) <= 4096 for c in chunks)


async def test_delivery_retries_then_succeeds():
    class Flaky(Channel):
        name = "flaky"
        max_message_length = 10

        def __init__(self):
            self.calls, self.sent = 0, []

        async def send(self, message):
            self.calls += 1
            if self.calls == 1:
                raise ConnectionError("blip")
            self.sent.append(message.content)

        async def listen(self, bus):
            pass

        async def health_check(self):
            return True

    channel = Flaky()
    await deliver(channel, SendMessage("aaaa\n\nbbbb\n\ncccc", "r"), base_delay=0.01)
    assert channel.sent == ["aaaa\n\nbbbb", "cccc"]


async def test_delivery_gives_up_after_three_tries():
    class Dead(Channel):
        name = "dead"
        attempts = 0

        async def send(self, message):
            Dead.attempts += 1
            raise ConnectionError("down")

        async def listen(self, bus):
            pass

        async def health_check(self):
            return True

    with pytest.raises(ConnectionError):
        await deliver(Dead(), SendMessage("x", "r"), base_delay=0.001)
    assert Dead.attempts == 3


# debounce -----------------------------------------------------------------------------------

async def test_debounce_merges_close_texts_per_sender():
    flushed = []

    async def flush(messages):
        flushed.append([m.content for m in messages])

    debouncer = InboundDebouncer(flush, window=0.05, max_wait=1.0)
    await debouncer.submit(msg("hello"), True)
    await debouncer.submit(msg("are you there"), True)
    await debouncer.submit(msg("hi", sender="bob"), True)
    await asyncio.sleep(0.12)
    assert sorted(flushed) == [["hello", "are you there"], ["hi"]]


async def test_debounce_never_merges_commands_and_flushes_first():
    flushed = []

    async def flush(messages):
        flushed.append([m.content for m in messages])

    debouncer = InboundDebouncer(flush, window=10)
    await debouncer.submit(msg("text"), True)
    await debouncer.submit(msg("/pins"), False)
    assert flushed == [["text"], ["/pins"]]


async def test_debounce_max_wait_flushes_a_steady_stream():
    flushed = []

    async def flush(messages):
        flushed.append(len(messages))

    debouncer = InboundDebouncer(flush, window=0.05, max_wait=0.12)
    for _ in range(10):
        await debouncer.submit(msg("more"), True)
        await asyncio.sleep(0.03)
    await asyncio.sleep(0.1)
    assert len(flushed) >= 2 and sum(flushed) == 10


# preflight ----------------------------------------------------------------------------------

def test_preflight_allowlist_mentions_and_duplicates():
    pre = Preflight({"tg": ChannelAccess(frozenset({"42"})), "open": ChannelAccess(frozenset({"*"}))})
    assert pre.admit(ChannelMessage("42", "42", "hi", "tg", id="1")) is None
    assert pre.admit(ChannelMessage("42", "42", "hi", "tg", id="1")) == "duplicate message id"
    assert "allowlist" in pre.admit(ChannelMessage("7", "7", "hi", "tg", id="2"))
    assert "allowlist" in pre.admit(ChannelMessage("7", "7", "hi", "unconfigured", id="3"))
    group = dict(reply_target="g1", is_group=True)
    assert "mention" in pre.admit(ChannelMessage("42", content="hi", channel="tg", id="4", **group))
    assert pre.admit(ChannelMessage("42", content="@bot hi", channel="tg", id="5", mentioned=True, **group)) is None
    assert pre.admit(ChannelMessage("anyone", "x", "hi", "open", id="6")) is None


# hooks --------------------------------------------------------------------------------------

async def test_hooks_modify_and_cancel():
    class Upper(Hook):
        async def on_message_received(self, m):
            return ChannelMessage(m.sender, m.reply_target, m.content.upper(), m.channel)

    class Censor(Hook):
        async def on_message_sending(self, m, reply):
            return Cancel("no") if "secret" in reply else reply + "!"

    runner = HookRunner([Upper(), Censor()])
    assert (await runner.received(msg("hi"))).content == "HI"
    assert await runner.sending(msg("x"), "ok") == "ok!"
    assert await runner.sending(msg("x"), "the secret") is None
