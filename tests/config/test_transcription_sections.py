"""``[transcription]``: presets fill the endpoint, model and key variable; a local whisper server
is a ``base_url`` and a model; a section that could never transcribe is refused by ``edge-cli
config check`` (exit 2, naming the key and the fix); the key is a secret, never shown."""

from __future__ import annotations

import pytest

from edge.cli.main import main
from edge.config.transcription import TranscriptionConfig
from edge.transcription import Transcriber


def check(write_config, text: str, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["config", *(args or ("check",)), "--config", str(write_config(text))])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("preset, url, model, variable", [
    ("openai", "https://api.openai.com/v1", "whisper-1", "OPENAI_API_KEY"),
    ("groq", "https://api.groq.com/openai/v1", "whisper-large-v3-turbo", "GROQ_API_KEY"),
])
def test_a_preset_names_the_service_its_model_and_its_key(preset, url, model, variable):
    section = TranscriptionConfig(preset=preset)
    transcriber = Transcriber.from_config(section, env={})
    assert (section.enabled, transcriber.base_url, transcriber.model) == (True, url, model)
    assert section.key_variable == variable


def test_a_local_whisper_server_is_a_base_url_and_a_model():
    section = TranscriptionConfig(base_url="http://127.0.0.1:8000", model="Systran/faster-whisper-small",
                                  language="de", max_bytes=5_000_000, max_seconds=120)
    transcriber = Transcriber.from_config(section, env={})
    assert (transcriber.base_url, section.key_variable) == ("http://127.0.0.1:8000/v1", None)
    assert (transcriber.language, transcriber.max_bytes, transcriber.max_seconds) == ("de", 5_000_000, 120)
    assert not TranscriptionConfig().enabled


@pytest.mark.parametrize("section, key, why", [
    ('base_url = "127.0.0.1:8000/v1"\nmodel = "m"', "transcription.base_url",
     "must start with http:// or https:// (got '127.0.0.1:8000/v1'); write \"http://127.0.0.1:8000/v1\""),
    ('base_url = "http://127.0.0.1:8000/v1"', "transcription",
     "base_url names a transcription server but model is empty"),
    ('preset = "deepgram"', "transcription.preset", "'openai' or 'groq'"),
    ('preset = "groq"\nmax_bytes = 30000000', "transcription.max_bytes", "must be at most 2.5e+07"),
    ('preset = "groq"\nlanguage = "english"', "transcription.language", "pattern"),
    ('preset = "groq"\ntimeout_seconds = 0', "transcription.timeout_seconds", "greater than 0"),
])
def test_a_section_that_could_never_transcribe_is_refused(write_config, isolated_env, capsys,
                                                          section, key, why):
    code, _, err = check(write_config, f"[transcription]\n{section}\n", capsys)
    assert code == 2, err
    assert f"  {key}: " in err and why in err, err


def test_the_key_is_redacted_when_the_config_is_shown(write_config, isolated_env, capsys):
    code, out, _ = check(write_config, '[transcription]\npreset = "groq"\napi_key = "gsk-shown-never"\n',
                         capsys, "show")
    assert code == 0 and "gsk-shown-never" not in out and "transcription" in out
