"""Pictures on Signal, against the loopback signal-cli daemon and a fake model: each
``[IMAGE:path]`` the outbox lets out leaves as an attachment of the reply's message, a data URI
carrying the file's bytes (signal-cli's ``send --attachment`` takes a path or a data URI); any
other marker becomes one refusal that never says whether the file exists, and its bytes never
leave."""

from __future__ import annotations

import asyncio
import base64
import json

from edge.channels.base import SendMessage
from edge.channels.outbox import IMAGE_REFUSED, Outbox
from edge.channels.signal import SignalChannel
from tests.fakes.openai_server import OpenAIServer, completion
from tests.fakes.signal_server import FakeSignal, signal_config
from tests.helpers import until

OWNER = "+4915111111111"
PNG = b"\x89PNG\r\n\x1a\n" + b"outbox plot"
JPEG = b"\xff\xd8\xff\xe0" + b"outbox photo"



def setup(server: FakeSignal, model: OpenAIServer) -> str:
    return signal_config(server, [OWNER], f"""
[provider]
base_url = "{model.base_url}"
model = "m"
[agent]
debounce_ms = 0
""")


async def started(server: FakeSignal, start_agent, model: OpenAIServer) -> None:
    await start_agent(setup(server, model))
    await until(lambda: server.streams)  # the channel listens


def sends_to(server: FakeSignal, recipient: str) -> list[dict]:
    return [p for p in server.sent() if p.get("recipient") == [recipient]
            or p.get("groupId") == recipient]


def decoded(uri: str) -> tuple[str, bytes]:
    """A data URI's head (``data:<MIME>;filename=<NAME>``) and its bytes."""
    head, sep, data = uri.partition(";base64,")
    assert sep and head.startswith("data:")
    return head, base64.b64decode(data, validate=True)


async def test_text_and_pictures_leave_as_one_message(signal_daemon, start_agent, tmp_path):
    outbox = tmp_path / "state" / "workspace" / "outbox"  # the default: the workspace's outbox/
    reply = f"Here is the plot and the shed:\n[IMAGE:{outbox}/plot.png]\n[IMAGE:shed.jpg]"
    with OpenAIServer([(200, completion(reply)), (200, completion(f"[IMAGE:{outbox}/plot.png]"))
                       ]) as model:
        await started(signal_daemon, start_agent, model)
        assert outbox.is_dir()  # the agent makes its outbox
        (outbox / "plot.png").write_bytes(PNG)
        (outbox / "shed.jpg").write_bytes(JPEG)
        signal_daemon.push_message(OWNER, "show me the plot and the shed")
        [sent] = await until(lambda: sends_to(signal_daemon, OWNER))
        signal_daemon.push_message(OWNER, "once more, in the group", group="grp1",
                                   mentions=[{"number": signal_daemon.account, "start": 0, "length": 1}])
        [in_group] = await until(lambda: sends_to(signal_daemon, "grp1"))
    assert sent["message"] == "Here is the plot and the shed:"
    assert [decoded(uri) for uri in sent["attachments"]] == [
        ("data:image/png;filename=plot.png", PNG), ("data:image/jpeg;filename=shed.jpg", JPEG)]
    assert in_group["message"] == "" and [decoded(u) for u in in_group["attachments"]] == [
        ("data:image/png;filename=plot.png", PNG)]
    prompt = model.requests[0]["messages"][0]["content"]
    assert f"To send a picture (PNG, JPEG, GIF or WebP), it must be in {outbox}" in prompt
    assert "plain text only, no Markdown" in prompt


async def test_pictures_only_from_the_outbox(signal_daemon, start_agent, tmp_path):
    outbox = tmp_path / "state" / "workspace" / "outbox"
    config_file = tmp_path / "config.toml"
    markers = ["/etc/passwd", str(config_file), f"{outbox}/../../../config.toml",
               f"{outbox}/config-link.png", "/etc/does-not-exist.png", f"{outbox}/plot.png",
               f"{outbox}/fake.png"]
    reply = "Here you go:\n" + "\n".join(f"[IMAGE:{m}]" for m in markers)
    with OpenAIServer([(200, completion(reply)), (200, completion("[IMAGE:/etc/passwd]"))]) as model:
        await started(signal_daemon, start_agent, model)
        (outbox / "plot.png").write_bytes(PNG)
        (outbox / "config-link.png").symlink_to(config_file)
        (outbox / "fake.png").write_text("root:x:0:0:root:/root:/bin/bash\n")
        signal_daemon.push_message(OWNER, "send me the plot")
        [sent] = await until(lambda: sends_to(signal_daemon, OWNER))
        signal_daemon.push_message(OWNER, "and the password file")
        await until(lambda: len(sends_to(signal_daemon, OWNER)) == 2)
        await asyncio.sleep(0.2)
    [attachment] = sent["attachments"]
    assert decoded(attachment) == ("data:image/png;filename=plot.png", PNG)
    text, *refusals = sent["message"].split("\n")
    assert text == "Here you go:" and refusals == [IMAGE_REFUSED] * 6
    assert not any(word in IMAGE_REFUSED for word in ("passwd", "config", "exist", "not found"))
    only_refused = sends_to(signal_daemon, OWNER)[1]
    assert only_refused["message"] == IMAGE_REFUSED and "attachments" not in only_refused
    everything = json.dumps(signal_daemon.calls)
    leaked = [base64.b64encode(config_file.read_bytes()).decode(), "cm9vdDp4OjA6MDpyb290"]  # root:x:0:0:root
    assert not any(secret in everything for secret in leaked)


async def test_a_channel_without_an_outbox_sends_no_picture(signal_daemon, tmp_path):
    (tmp_path / "plot.png").write_bytes(PNG)
    (tmp_path / "a;b,c=d é.png").write_bytes(PNG)
    without = SignalChannel(signal_daemon.url, signal_daemon.account, {OWNER})
    with_outbox = SignalChannel(signal_daemon.url, signal_daemon.account, {OWNER},
                                outbox=Outbox(tmp_path, max_bytes=len(PNG)))
    try:
        assert "[IMAGE:" not in without.capabilities and "[IMAGE:" in with_outbox.capabilities
        await without.send(SendMessage(f"the plot\n[IMAGE:{tmp_path}/plot.png]", OWNER))
        await with_outbox.send(SendMessage("[IMAGE:plot.png] a bigger one: [IMAGE:big.png]\n"
                                           "[IMAGE:a;b,c=d é.png]", OWNER))
        (tmp_path / "big.png").write_bytes(PNG + b"\0")  # over max_bytes
        await with_outbox.send(SendMessage("[IMAGE:big.png]", OWNER))
    finally:
        await without.aclose()
        await with_outbox.aclose()
    first, second, third = sends_to(signal_daemon, OWNER)
    assert first == {"account": signal_daemon.account, "recipient": [OWNER],
                     "message": f"the plot\n{IMAGE_REFUSED}"}
    assert second["message"] == f"a bigger one: {IMAGE_REFUSED}"
    assert [decoded(u) for u in second["attachments"]] == [
        ("data:image/png;filename=plot.png", PNG), ("data:image/png;filename=a_b_c_d_é.png", PNG)]
    assert third["message"] == IMAGE_REFUSED and "attachments" not in third
