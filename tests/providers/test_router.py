"""RouterProvider: ``hint:`` model names and keyword classification (seed 004)."""

from __future__ import annotations

import pytest

from edge.core.messages import ChatMessage
from edge.providers.openai import OpenAICompatibleProvider
from edge.providers.router import ClassificationRule, Route, RouterProvider, classify
from tests.providers.fakes import OpenAIFake, Say


@pytest.fixture
async def router(serve):
    general = await serve(OpenAIFake(default=Say("general")))
    coder = await serve(OpenAIFake(default=Say("coder")))
    default = OpenAICompatibleProvider(general.url, "small", "sk-test", name="local")
    code = OpenAICompatibleProvider(coder.url, "coder-base", "sk-test", name="remote")
    rules = [ClassificationRule("code", keywords=("python", "script")),
             ClassificationRule("long", min_length=200, priority=-1)]
    routes = {"code": Route(code, "coder-large"), "long": Route(code)}
    yield RouterProvider(default, routes, rules), general, coder
    await default.aclose()
    await code.aclose()


async def test_keywords_route_the_query_and_others_stay_on_the_default(router):
    provider, general, coder = router
    assert (await provider.chat([ChatMessage.user("write a python script")])).text == "coder"
    assert coder.requests[-1].json["model"] == "coder-large"
    assert (await provider.chat([ChatMessage.user("turn the led on")])).text == "general"
    assert general.requests[-1].json["model"] == "small"
    assert (await provider.chat([ChatMessage.user("x" * 250)])).text == "coder"
    assert coder.requests[-1].json["model"] == "coder-base"


async def test_hint_model_names_pick_the_route_and_unknown_hints_fall_back(router):
    provider, general, coder = router
    greeting = [ChatMessage.user("hi")]
    assert (await provider.chat(greeting, model="hint:code")).text == "coder"
    assert (await provider.chat(greeting, model="hint:nonexistent")).text == "general"
    assert general.requests[-1].json["model"] == "small"  # never "hint:nonexistent"
    assert provider.name == "local" and provider.model == "small"


def test_classification_uses_whole_words_and_priority():
    rules = [ClassificationRule("code", keywords=("code",)),
             ClassificationRule("urgent", patterns=("URGENT",), priority=5)]
    assert classify("decode this", rules) is None
    assert classify("Code review please", rules) == "code"
    assert classify("URGENT: code is broken", rules) == "urgent"
    assert classify("urgent code", rules) == "code"  # patterns are case-sensitive
