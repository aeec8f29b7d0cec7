"""Charts reach a Telegram user through the loopback Bot API as real pictures: ``/chart`` and the
model's ``sensor_chart`` tool, from a week of readings the agent kept; strangers get none, and
each sender's charts are rate-limited. A Signal user gets the same picture as an attachment
through the loopback signal-cli daemon."""

from __future__ import annotations

import base64
import io
import re
import time
from pathlib import Path

import pytest
from PIL import Image

from edge.tools.charts import SensorChartTool
from tests.charts.greenhouse import DAY, RULES, Week, write_week
from tests.fakes.openai_server import OpenAIServer, completion
from tests.fakes.signal_server import signal_config
from tests.fakes.telegram_server import captions_to, photos_to, telegram_config, texts_to
from tests.helpers import asker, until

MARKER = re.compile(r"\[IMAGE:([^\]]+)\]")




@pytest.fixture
async def week(isolated_env) -> Week:
    return await write_week(Path(isolated_env["EDGE_STATE_DIR"]), time.time())


def chart_tool(agent) -> SensorChartTool:
    """The running agent's ``sensor_chart`` tool, which ``/chart`` calls too."""
    tool = agent.runtime.tools["sensor_chart"]
    assert isinstance(tool, SensorChartTool) and tool in agent.runtime.agent.tools
    return tool


async def test_chart_command_sends_the_picture_of_the_week_it_kept(telegram, start_agent, week):
    agent = await start_agent(telegram_config(telegram) + RULES)
    chart_tool(agent)
    telegram.push_message(42, "/chart greenhouse temperature 24h")
    [photo] = await until(lambda: photos_to(telegram, 42), timeout=30)
    assert photo.format == "PNG" and photo.width == 1080 and photo.height > 700
    assert len(photo.convert("RGB").getcolors(maxcolors=1 << 20)) > 50  # a drawing, not a blank
    [caption] = captions_to(telegram, 42)  # one message: the picture and its caption
    assert texts_to(telegram, 42) == []
    low, high = map(float, re.match(r"greenhouse, last 1d: temperature ([\d.]+)–([\d.]+) °C",
                                    caption).groups())
    runs = len([run for run in week.fan_runs if run[1] > week.now - DAY])  # in the last day
    assert 11 < low < 13 and 27 < high < 29
    assert caption.endswith(f"; fan on {runs} time{'s' * (runs > 1)}, 1 refused")
    assert "[IMAGE:" not in caption

    telegram.push_message(42, "/chart shed")
    await until(lambda: len(texts_to(telegram, 42)) == 1)
    assert texts_to(telegram, 42)[0] == "Error: no sensor 'shed' (sensors: greenhouse)"
    telegram.push_message(42, "/chart")
    await until(lambda: len(texts_to(telegram, 42)) == 2)
    assert texts_to(telegram, 42)[1].startswith("Usage: /chart NAME [QUANTITY] [SINCE]")
    telegram.push_message(99, "/chart greenhouse")  # not an allowed user
    telegram.push_message(43, "/chart greenhouse 2d")
    await until(lambda: photos_to(telegram, 43), timeout=30)
    assert photos_to(telegram, 99) == [] and len(telegram.sent("sendPhoto")) == 2
    telegram.push_message(43, "/chart greenhouse 24h with led")  # the person picks the tracks
    await until(lambda: len(photos_to(telegram, 43)) == 2, timeout=30)
    assert "fan on" not in captions_to(telegram, 43)[1] and "fan on" in caption
    telegram.push_message(43, "/chart greenhouse with")
    await until(lambda: texts_to(telegram, 43))
    assert texts_to(telegram, 43)[0].startswith("Usage: /chart NAME [QUANTITY] [SINCE] [with")


async def test_the_model_sends_the_chart_with_its_reply(telegram, start_agent, week):
    def model(body):
        tool_results = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_results:
            return 200, completion(tool_calls=[{"name": "sensor_chart", "arguments": {
                "name": "greenhouse", "since": "24h"}}])
        [path] = MARKER.findall(str(tool_results[-1]["content"]))
        return 200, completion(f"It got to 28 °C this morning and the fan ran.\n[IMAGE:{path}]")

    with OpenAIServer(responder=model) as server:
        extra = (f'[provider]\nbase_url = "{server.base_url}"\nmodel = "m"\n'
                 '[agent]\ndebounce_ms = 0\n')
        agent = await start_agent(telegram_config(telegram) + RULES + extra)
        chart_tool(agent)
        telegram.push_message(42, "how warm did the greenhouse get, and did the fan run?")
        [photo] = await until(lambda: photos_to(telegram, 42), timeout=30)
    assert photo.width == 1080
    assert "sensor_chart" in {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert captions_to(telegram, 42)[0].startswith("It got to 28 °C")


async def test_each_sender_has_a_few_charts_a_minute(start_agent, week, isolated_env):
    agent = await start_agent("[channels.cli]\nenabled = false\n" + RULES)
    tool = chart_tool(agent)
    tool.limit.per_minute = 2
    results = [await tool.execute({"name": "greenhouse", "since": "6h"}, asker("telegram:42"))
               for _ in range(3)]
    assert [r.success for r in results] == [True, True, False]
    assert results[2].error.startswith("at most 2 charts a minute; try again in")
    other = await tool.execute({"name": "greenhouse", "since": "6h", "outputs": []},
                               asker("telegram:43"))
    assert other.success and other.data["marker"] == f"[IMAGE:{other.data['path']}]"
    assert other.data["tracks"] == [] and results[0].data["tracks"] == ["fan"]  # as asked


async def test_chart_reaches_a_signal_user_as_an_attachment(signal_daemon, start_agent, week):
    agent = await start_agent(signal_config(signal_daemon, ["+4917600000001"]) + RULES)
    chart_tool(agent)
    await until(lambda: signal_daemon.streams)
    signal_daemon.push_message("+4917600000001", "/chart greenhouse")
    [sent] = await until(lambda: [p for p in signal_daemon.sent() if p.get("attachments")], timeout=30)
    [attachment] = sent["attachments"]
    head, _, data = attachment.partition(";base64,")
    assert head.startswith("data:image/png;filename=chart-greenhouse-") and head.endswith(".png")
    photo = Image.open(io.BytesIO(base64.b64decode(data, validate=True)))
    assert photo.format == "PNG" and photo.width == 1080 and photo.height > 700
    assert len(photo.convert("RGB").getcolors(maxcolors=1 << 20)) > 50  # a drawing, not a blank
    low, high = map(float, re.match(r"greenhouse, last 1d: temperature ([\d.]+)–([\d.]+) °C",
                                    sent["message"]).groups())
    assert 11 < low < 13 and 27 < high < 29 and "[IMAGE:" not in sent["message"]
    assert sent["recipient"] == ["+4917600000001"]
    assert signal_daemon.sent() == [sent]  # one message: the picture and its caption
