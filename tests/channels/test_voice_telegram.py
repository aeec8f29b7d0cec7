"""Telegram voice notes end to end: a loopback Bot API serving the files, a loopback
OpenAI-compatible transcription server speaking the real multipart API, a loopback model. An
allowed person's voice note is shown as ``🎤 ...`` and then acts exactly as the typed text would
(a direct command, or the model asking for approval); a stranger's is never downloaded; with no
``[transcription]``, or over a limit, one line answers and nothing is downloaded; a refused key,
a failing or silent service each get a clear line and the agent keeps working."""

from __future__ import annotations

import asyncio

import pytest

from edge.channels.voice import SETUP_LINE
from tests.fakes.openai_server import OpenAIServer, completion
from tests.fakes.telegram_server import telegram_config as config
from tests.fakes.telegram_server import texts_to
from tests.fakes.transcription_server import FakeTranscription
from tests.helpers import until

KEY = "sk-voice-secret-123"
OGG = b"OggS\x00\x02" + bytes(range(256)) * 4
"""A voice note's bytes (binary, as Opus in OGG is)."""



@pytest.fixture
def whisper():
    with FakeTranscription(api_key=KEY) as server:
        yield server


def transcription(server: FakeTranscription, key: str = KEY, extra: str = "") -> str:
    return (f'[transcription]\nbase_url = "{server.base_url}"\nmodel = "whisper-test"\n'
            f'api_key = "{key}"\nlanguage = "en"\n{extra}')


async def test_a_voice_note_is_shown_then_asks_the_model_and_switches_after_approval(
        telegram, whisper, start_agent, mock_factory):
    whisper.transcripts[OGG] = "Light up the LED, please."
    replies = [(200, completion(None, [{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}])),
               (200, completion("The LED is on now."))]
    with OpenAIServer(replies) as model:
        extra = f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n'
        await start_agent(config(telegram) + extra + transcription(whisper))
        telegram.push_voice(42, OGG, duration=2)
        request = await until(lambda: [p for p in telegram.sent() if "reply_markup" in p])
        assert texts_to(telegram, 42)[:2] == ["🎤 Light up the LED, please.",
                                              "Approve: switch gpio:GPIO17 (led) on?"]
        assert model.requests[0]["messages"][-1]["content"].endswith("Light up the LED, please.")
        assert mock_factory.pin(17).state == 0
        buttons = request[0]["reply_markup"]["inline_keyboard"][0]
        message = {"message_id": 5, "chat": {"id": 42, "type": "private"}, "text": request[0]["text"]}
        telegram.push_callback(42, buttons[0]["callback_data"], message)
        await until(lambda: "The LED is on now.\n\nReceipt: led: on (read back on)" in texts_to(telegram, 42))
        assert mock_factory.pin(17).state == 1
    (upload,) = whisper.requests
    assert upload.fields == {"model": "whisper-test", "response_format": "json", "language": "en"}
    assert (upload.filename, upload.content_type, upload.audio) == ("voice.ogg", "audio/ogg", OGG)
    assert upload.authorization == f"Bearer {KEY}"
    assert telegram.downloads == ["voice/file1.oga"]


async def test_a_spoken_command_acts_as_the_typed_command(telegram, whisper, start_agent, mock_factory):
    whisper.transcripts[OGG] = "/gpio led on"
    await start_agent(config(telegram) + transcription(whisper))
    telegram.push_voice(42, OGG, kind="audio")
    await until(lambda: len(texts_to(telegram, 42)) == 2)
    assert texts_to(telegram, 42) == ["🎤 /gpio led on", "gpio:GPIO17 (led) set on"]
    assert mock_factory.pin(17).state == 1
    assert whisper.requests[0].filename == "voice.mp3"  # named by its type: the service reads it


async def test_a_strangers_voice_note_gets_the_pairing_hint_and_is_never_fetched(
        telegram, whisper, start_agent, mock_factory):
    await start_agent(config(telegram) + transcription(whisper))
    telegram.push_voice(7, OGG)
    await until(lambda: texts_to(telegram, 7))
    telegram.push_message(42, "/pins")  # handled after the stranger's note: it had its chance
    await until(lambda: texts_to(telegram, 42))
    await asyncio.sleep(0.2)
    (hint,) = texts_to(telegram, 7)
    assert "edge-cli channel pair telegram" in hint
    assert telegram.sent("getFile") == [] and telegram.downloads == [] and whisper.requests == []
    assert mock_factory.pin(17).state == 0


async def test_without_transcription_a_voice_note_gets_the_setup_line(telegram, start_agent):
    await start_agent(config(telegram))
    telegram.push_voice(42, OGG)
    await until(lambda: texts_to(telegram, 42))
    assert texts_to(telegram, 42) == [SETUP_LINE]
    assert SETUP_LINE.startswith('Voice notes need [transcription] in the config: preset = "groq"')
    assert telegram.sent("getFile") == [] and telegram.downloads == []


async def test_too_big_or_too_long_is_refused_with_the_limit_and_nothing_downloaded(
        telegram, whisper, start_agent):
    await start_agent(config(telegram) + transcription(whisper, extra="max_seconds = 60\n"))
    telegram.push_voice(42, OGG, file_size=30_000_000)
    await until(lambda: texts_to(telegram, 42))
    telegram.push_voice(42, OGG, duration=61)
    await until(lambda: len(texts_to(telegram, 42)) == 2)
    assert texts_to(telegram, 42) == [
        "That voice note is 30 MB; voice notes of up to 10 MB are transcribed ([transcription] max_bytes).",
        "That voice note lasts 61 s; voice notes of up to 60 s are transcribed ([transcription] max_seconds)."]
    assert telegram.sent("getFile") == [] and telegram.downloads == [] and whisper.requests == []


async def test_a_note_larger_than_its_update_said_is_not_read_past_the_limit(
        telegram, whisper, start_agent):
    await start_agent(config(telegram) + transcription(whisper, extra="max_bytes = 1000\n"))
    telegram.push_voice(42, OGG, file_size=500)  # the update understates it: 1030 bytes
    await until(lambda: texts_to(telegram, 42))
    assert texts_to(telegram, 42) == ["I could not fetch that voice note: it is larger than 1000 "
                                      "bytes ([transcription] max_bytes)"]
    assert whisper.requests == []


async def test_a_refused_key_a_failing_and_a_silent_service_each_get_a_line_and_the_agent_works_on(
        telegram, whisper, start_agent, mock_factory):
    await start_agent(config(telegram) + transcription(whisper, key="sk-wrong-key-456",
                                                       extra="timeout_seconds = 0.5\n"))
    telegram.push_voice(42, OGG)
    await until(lambda: texts_to(telegram, 42))
    whisper.api_key = "sk-wrong-key-456"
    whisper.failures = [500, ("hang", 2.0)]
    telegram.push_voice(42, OGG)
    await until(lambda: len(texts_to(telegram, 42)) == 2)
    telegram.push_voice(42, OGG)
    await until(lambda: len(texts_to(telegram, 42)) == 3)
    telegram.push_message(42, "/gpio led on")
    await until(lambda: len(texts_to(telegram, 42)) == 4)
    assert texts_to(telegram, 42) == [
        "The transcription service refused the key (401); check [transcription] api_key "
        "(or the preset's GROQ_API_KEY / OPENAI_API_KEY).",
        "The transcription service answered 500: failure 500 as scripted",
        "The transcription service did not answer within 0.5 s; try again, or raise "
        "[transcription] timeout_seconds.",
        "gpio:GPIO17 (led) set on"]
    assert not any("sk-wrong" in p["text"] for p in telegram.sent())
    assert mock_factory.pin(17).state == 1


async def test_in_a_group_only_a_voice_note_replying_to_the_bot_is_transcribed(
        telegram, whisper, start_agent, mock_factory):
    whisper.transcripts[OGG] = "/gpio led on"
    await start_agent(config(telegram) + transcription(whisper))
    telegram.push_voice(42, OGG, chat_id=-100, chat_type="supergroup")
    bot_message = {"message_id": 1, "date": 0, "from": {"id": 999, "is_bot": True, "first_name": "Edge"},
                   "chat": {"id": -100, "type": "supergroup"}, "text": "Ready."}
    telegram.push_voice(42, OGG, chat_id=-100, chat_type="supergroup", reply_to_message=bot_message)
    await until(lambda: len(texts_to(telegram, -100)) == 2)
    assert texts_to(telegram, -100) == ["🎤 /gpio led on", "gpio:GPIO17 (led) set on"]
    assert telegram.downloads == ["voice/file2.oga"] and len(whisper.requests) == 1


async def test_a_malformed_voice_update_is_dropped_and_the_next_is_handled(
        telegram, whisper, start_agent, mock_factory):
    await start_agent(config(telegram) + transcription(whisper))
    base = {"date": 0, "from": {"id": 42, "is_bot": False, "first_name": "u"},
            "chat": {"id": 42, "type": "private"}}
    telegram.push_raw(
        {"message": {**base, "message_id": 1, "voice": {"file_id": "file1", "duration": "3"}}},
        {"message": {**base, "message_id": 2, "voice": {"file_id": "", "duration": 3}}},
        {"message": {**base, "message_id": 3, "voice": {"file_id": "x", "duration": 3, "file_size": -1}}},
        {"message": {**base, "message_id": 4, "text": "/gpio led on"}})
    await until(lambda: texts_to(telegram, 42))
    await asyncio.sleep(0.2)
    assert texts_to(telegram, 42) == ["gpio:GPIO17 (led) set on"]
    assert telegram.sent("getFile") == [] and whisper.requests == []


async def test_a_two_megabyte_transcript_is_cut_before_the_chat_and_the_model(
        telegram, whisper, start_agent):
    spoken = "turn on the pump and then " * 80_000  # 2 MB, as a confused service answered
    whisper.transcripts[OGG] = spoken
    with OpenAIServer([(200, completion("That was long."))]) as model:
        extra = f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n'
        await start_agent(config(telegram) + extra + transcription(whisper))
        telegram.push_voice(42, OGG)
        await until(lambda: len(texts_to(telegram, 42)) == 2)
        shown, reply = texts_to(telegram, 42)
        asked = model.requests[0]["messages"][-1]["content"]
    cut = spoken[:3800].rstrip()
    assert shown == (f"🎤 {cut} … (cut: the transcript has {len(spoken.strip())} characters, 3800 are "
                     "kept; [transcription] max_transcript_chars)")
    assert reply == "That was long."
    assert cut in asked and len(asked) < 4500
