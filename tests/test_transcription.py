"""The transcriber against a loopback OpenAI-compatible server speaking the real multipart API:
what it sends (the form, the key: the configured one, else the preset's variable, never the
model's), and the one clear line each failure becomes, never carrying the key."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from edge.config.transcription import TranscriptionConfig
from edge.transcription import Transcriber, TranscriptionError
from tests.fakes.transcription_server import FakeTranscription

AUDIO = b"RIFF\x00\x00WAVEfmt " + bytes(range(256))
KEY = "gsk-unit-secret-0001"


@pytest.fixture
def note(tmp_path) -> Path:
    """The voice note's file, as the channel fetched it."""
    path = tmp_path / "note.part"
    path.write_bytes(AUDIO)
    return path


@pytest.fixture
def whisper():
    with FakeTranscription(api_key=KEY) as server:
        yield server


def groq_at(server: FakeTranscription, **keys: str) -> Transcriber:
    """The groq preset, pointed at ``server``; ``keys`` is the environment."""
    return Transcriber.from_config(TranscriptionConfig(preset="groq", base_url=server.base_url),
                                   env=keys)


async def test_the_form_is_the_apis_and_the_presets_variable_holds_the_key(whisper, note):
    whisper.transcripts[AUDIO] = "  water the tomatoes \n"
    text = await groq_at(whisper, GROQ_API_KEY=KEY, EDGE_API_KEY="model-key").transcribe(
        note, "note.wav", "audio/wav")
    assert text == "water the tomatoes"
    (upload,) = whisper.requests
    assert upload.fields == {"model": "whisper-large-v3-turbo", "response_format": "json"}
    assert (upload.filename, upload.content_type, upload.audio) == ("note.wav", "audio/wav", AUDIO)
    assert upload.authorization == f"Bearer {KEY}"


async def test_the_models_generic_key_is_never_sent(whisper, note):
    with pytest.raises(TranscriptionError, match=r"refused the key \(401\)"):
        await groq_at(whisper, EDGE_API_KEY="model-key").transcribe(note, "a.wav", "audio/wav")
    assert whisper.requests[0].authorization is None


async def test_a_local_server_without_a_key_gets_no_authorization(note):
    with FakeTranscription() as local:
        transcriber = Transcriber(local.root, "small")  # a bare host: /v1 is added
        assert await transcriber.transcribe(note, "a.wav", "audio/wav") == "hello there"
        assert local.requests[0].authorization is None


@pytest.mark.parametrize("failure, line", [
    (413, "found the voice note too large (413); lower [transcription] max_bytes"),
    (429, "is rate-limiting us (429); try again in a minute."),
    (403, "refused the key (403)"),
    ((500, f"upstream said Bearer {KEY} is odd"), "answered 500: upstream said Bearer *** is odd"),
])
async def test_each_failure_is_one_clear_line_without_the_key(whisper, failure, line, note):
    whisper.failures = [failure]
    with pytest.raises(TranscriptionError) as caught:
        await groq_at(whisper, GROQ_API_KEY=KEY).transcribe(note, "a.wav", "audio/wav")
    assert line in str(caught.value) and KEY not in str(caught.value)


async def test_a_silent_service_costs_its_timeout(whisper, note):
    whisper.failures = [("hang", 1.0)]
    transcriber = Transcriber(whisper.base_url, "m", KEY, timeout=0.2)
    with pytest.raises(TranscriptionError, match=r"did not answer within 0\.2 s; try again, or raise"):
        await transcriber.transcribe(note, "a.wav", "audio/wav")


async def test_an_unreachable_service_and_a_wrong_url_are_named(note):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(TranscriptionError, match=r"could not be reached \(ConnectError\); check "
                                                 r"\[transcription\] base_url"):
        await Transcriber(f"http://127.0.0.1:{port}/v1", "m").transcribe(note, "a.wav", "audio/wav")
    wrong_url = pytest.raises(TranscriptionError, match="answered 404: Unknown request URL")
    with FakeTranscription() as local, wrong_url:
        await Transcriber(f"{local.root}/v2", "m").transcribe(note, "a.wav", "audio/wav")
