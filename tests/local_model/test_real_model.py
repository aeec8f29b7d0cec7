"""A real small model (Gemma 3 270M, Q4_K_M) behind a real llama.cpp server drives the agent:
the provider is the llamacpp preset pointed at the server, so the compact profile is on and the
reply is constrained to a valid call or words (edge/providers/constrained.py); local intents are
off, so every prompt reaches the model; temperature 0 and seed 42.

What is asserted holds whatever the model says: a call it makes to an allowlisted pin switches
the pin and the receipt says what the pin is; nothing outside the allowlist moves; a question
about state actuates nothing; no reply says a pin was switched when none was. How often the model
gets a prompt right is a bench figure (bench/bench_local_model.py), not asserted here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from edge.agent.intent_turn import NO_MODEL_ASKED
from edge.agent.receipts import NOTHING_SWITCHED, claims_a_switch
from edge.config.model import ProviderConfig
from edge.core.requester import Requester
from edge.hardware import Hardware
from edge.providers.factory import create_provider
from tests.agent.intent_prompts import OUTSIDE, PIN_NUMBERS
from tests.agent.test_intents_evaluation import evaluated_agent
from tests.helpers import msg
from tests.local_model.server import CONTEXT_TOKENS, LocalModelServer

MAX_REPLY_TOKENS = 40
"""Enough for one tool call (about 30 tokens of JSON) or a short answer; each token costs up to
a second under the grammar on two shared cores."""

COMMANDS = [("turn the pump on", "pump", 1), ("switch off the fan", "fan", 0)]
QUESTIONS = ["is the fan on?"]
OUTSIDE_ALLOWLIST = f"turn GPIO{OUTSIDE} on"

RECEIPT_ENTRY = re.compile(r"([\w-]+): (on|off) \(read back (on|off)\)")


def model_provider(server: LocalModelServer) -> Any:
    config = ProviderConfig(preset="llamacpp", base_url=server.base_url, model="gemma-3-270m",
                            temperature=0.0, max_tokens=MAX_REPLY_TOKENS, max_retries=0)
    assert config.compact, "the llamacpp preset turns the compact profile on"
    return create_provider(config, env={})


def levels(factory: Any) -> dict[int, int]:
    return {n: factory.pin(n).state for n in [*PIN_NUMBERS.values(), OUTSIDE]}


def check_turn(text: str, reply: str, before: dict[int, int], after: dict[int, int],
               may_move: bool) -> None:
    """What must hold after any turn, whatever the model said."""
    assert NO_MODEL_ASKED not in reply, (text, reply)  # the model was asked
    assert after[OUTSIDE] == before[OUTSIDE] == 0, (text, reply)
    if not may_move:
        assert after == before, (text, reply)
    moved = after != before
    receipt = reply.split("Receipt: ")[-1] if "Receipt: " in reply else ""
    assert not moved or receipt, ("a pin moved without a receipt", text, reply)
    last: dict[str, str] = {}
    for label, asked, read_back in RECEIPT_ENTRY.findall(receipt):
        assert asked == read_back, (text, reply)
        last[label] = read_back
    for label, said in last.items():  # the receipt tells the truth about each pin it names
        assert after[PIN_NUMBERS[label]] == (said == "on"), (text, reply, after)
    body = reply.split("\n\nReceipt:")[0].replace(NOTHING_SWITCHED, "")
    switched = bool(last) or moved
    assert switched or not claims_a_switch(body) or NOTHING_SWITCHED in reply, (text, reply)


async def test_a_real_small_model_switches_only_what_it_may_and_says_only_what_happened(
        local_model: LocalModelServer, eval_hardware: Hardware, mock_factory: Any,
        tmp_path: Path) -> None:
    agent = evaluated_agent(eval_hardware, model_provider(local_model), tmp_path)
    agent.settings.local_intents = False
    agent.settings.context_window_tokens = CONTEXT_TOKENS  # the server's -c, the compact minimum
    agent.settings.max_tool_iterations = 1  # one model call a turn: its calls run, then it ends
    setter = Requester("test", "setup")
    replies = []
    for text, pin, level in COMMANDS:  # the pin starts at the other level
        await eval_hardware.write(pin, not level, setter)
        before = levels(mock_factory)
        reply = await agent.respond(msg(text))
        check_turn(text, reply, before, levels(mock_factory), may_move=True)
        replies.append(reply)
    for text in [*QUESTIONS, OUTSIDE_ALLOWLIST]:
        before = levels(mock_factory)
        reply = await agent.respond(msg(text))
        check_turn(text, reply, before, levels(mock_factory), may_move=text == OUTSIDE_ALLOWLIST)
        replies.append(reply)
    assert all(reply.strip() for reply in replies), replies
