"""Signal voice notes end to end: a loopback signal-cli daemon whose attachment store serves
``getAttachment``, and a loopback OpenAI-compatible transcription server. An allowed number's
voice note is shown as ``🎤 ...`` and then acts exactly as the typed text would; a stranger's is
never fetched; with no ``[transcription]``, or over the size limit, one line answers and nothing
is fetched; a failing service gets a clear line and the channel keeps working."""

from __future__ import annotations

import asyncio

import pytest

from edge.channels.voice import SETUP_LINE
from tests.fakes.openai_server import OpenAIServer, completion
from tests.fakes.signal_server import FakeSignal, signal_config
from tests.fakes.transcription_server import FakeTranscription
from tests.helpers import until

OWNER, STRANGER = "+4915111111111", "+4915199999999"
KEY = "gsk-voice-secret-789"
AAC = b"\xff\xf1\x50\x80" + bytes(range(256)) * 3



@pytest.fixture
def whisper():
    with FakeTranscription(api_key=KEY) as server:
        yield server


def config(server: FakeSignal, extra: str = "") -> str:
    return signal_config(server, [OWNER], extra)


def transcription(server: FakeTranscription, extra: str = "") -> str:
    return (f'[transcription]\nbase_url = "{server.base_url}"\nmodel = "whisper-test"\n'
            f'api_key = "{KEY}"\n{extra}')


def messages_to(server: FakeSignal, number: str) -> list[str]:
    return [p["message"] for p in server.sent() if p.get("recipient") == [number]]


async def connected(server: FakeSignal) -> None:
    await until(lambda: server.connections >= 1 and server.streams)


async def test_a_voice_note_is_shown_then_switches_the_led_after_approval(
        signal_daemon, whisper, start_agent, mock_factory):
    whisper.transcripts[AAC] = "light up the led"
    replies = [(200, completion(None, [{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}])),
               (200, completion("The LED is on now."))]
    with OpenAIServer(replies) as model:
        extra = f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n'
        await start_agent(config(signal_daemon, extra + transcription(whisper)))
        await connected(signal_daemon)
        signal_daemon.push_voice(OWNER, AAC)
        prompt = await until(lambda: [m for m in messages_to(signal_daemon, OWNER) if "approve" in m])
        assert messages_to(signal_daemon, OWNER)[0] == "🎤 light up the led"
        assert mock_factory.pin(17).state == 0
        token = prompt[0].split('Reply "')[1].split()[0]
        signal_daemon.push_message(OWNER, f"{token} approve")
        await until(lambda: any(m.startswith("The LED is on now.") for m in messages_to(signal_daemon, OWNER)))
        assert mock_factory.pin(17).state == 1
        assert model.requests[0]["messages"][-1]["content"].endswith("light up the led")
    (upload,) = whisper.requests
    assert (upload.filename, upload.content_type, upload.audio) == ("voice.aac", "audio/aac", AAC)
    assert [c["params"]["id"] for c in signal_daemon.calls if c["method"] == "getAttachment"] == ["att1.aac"]


async def test_a_strangers_voice_note_gets_the_pairing_hint_and_is_never_fetched(
        signal_daemon, whisper, start_agent):
    await start_agent(config(signal_daemon, transcription(whisper)))
    await connected(signal_daemon)
    signal_daemon.push_voice(STRANGER, AAC)
    await until(lambda: messages_to(signal_daemon, STRANGER))
    await asyncio.sleep(0.2)
    (hint,) = messages_to(signal_daemon, STRANGER)
    assert "edge-cli channel pair signal" in hint
    assert signal_daemon.sent("getAttachment") == [] and whisper.requests == []


async def test_without_transcription_a_voice_note_gets_the_setup_line_and_nothing_fetched(
        signal_daemon, start_agent):
    await start_agent(config(signal_daemon))
    await connected(signal_daemon)
    signal_daemon.push_voice(OWNER, AAC)
    await until(lambda: messages_to(signal_daemon, OWNER))
    assert messages_to(signal_daemon, OWNER) == [SETUP_LINE]
    assert signal_daemon.sent("getAttachment") == []


async def test_over_the_size_limit_one_line_and_nothing_fetched(signal_daemon, whisper, start_agent):
    await start_agent(config(signal_daemon, transcription(whisper, "max_bytes = 2000000\n")))
    await connected(signal_daemon)
    signal_daemon.push_voice(OWNER, AAC, size=5_000_000)
    await until(lambda: messages_to(signal_daemon, OWNER))
    assert messages_to(signal_daemon, OWNER) == [
        "That voice note is 5 MB; voice notes of up to 2 MB are transcribed ([transcription] max_bytes)."]
    assert signal_daemon.sent("getAttachment") == [] and whisper.requests == []


async def test_a_failing_service_gets_a_line_and_typed_text_still_works(
        signal_daemon, whisper, start_agent, mock_factory):
    whisper.failures = [503]
    await start_agent(config(signal_daemon, transcription(whisper)))
    await connected(signal_daemon)
    signal_daemon.push_voice(OWNER, AAC)
    await until(lambda: messages_to(signal_daemon, OWNER))
    signal_daemon.push_message(OWNER, "/gpio led on")
    await until(lambda: len(messages_to(signal_daemon, OWNER)) == 2)
    assert messages_to(signal_daemon, OWNER) == [
        "The transcription service answered 503: failure 503 as scripted", "gpio:GPIO17 (led) set on"]
    assert mock_factory.pin(17).state == 1
