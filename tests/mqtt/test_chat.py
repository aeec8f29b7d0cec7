"""The chat topic as a channel in a running agent: the model's actuations asked from it pass the
same gate as anywhere (under ``supervised`` autonomy they need an approval the topic cannot
give, so they are refused; under ``full`` they act), and the answer comes back on ``chat/reply``."""

from __future__ import annotations

import pytest

from tests.fakes.mosquitto import Watcher
from tests.fakes.openai_server import OpenAIServer, completion

BASE = "edge-agent/chatty"
CONFIG = """
[provider]
base_url = "{model}"
model = "scripted"
[security]
autonomy = "{autonomy}"
[mqtt]
url = "{url}"
node_id = "chatty"
chat = true
"""


def scripted_model(body):
    """Asks to switch the LED on; then says what the tool answered."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return 200, completion(f"tool said: {last['content'][:200]}")
    return 200, completion(tool_calls=[{"name": "gpio_write",
                                        "arguments": {"pin": "led", "value": "on"}}])


@pytest.mark.parametrize("autonomy, switched", [("supervised", False), ("full", True)])
async def test_the_models_actuations_from_the_chat_topic_pass_the_gate(
        autonomy, switched, broker, start_agent, mock_factory):
    with OpenAIServer(responder=scripted_model) as model:
        async with Watcher(broker, f"{BASE}/#") as seen:
            await start_agent(CONFIG.format(model=model.base_url, autonomy=autonomy,
                                            url=broker.url))
            await seen.wait(f"{BASE}/availability", "online")
            await seen.publish(f"{BASE}/chat", "light up the led please")
            reply = (await seen.wait(f"{BASE}/chat/reply", timeout=15)).decode()
            assert mock_factory.pin(17).state == int(switched)
            if switched:
                await seen.wait(f"{BASE}/led", "ON")
            else:
                assert "cannot ask for it" in reply, reply
