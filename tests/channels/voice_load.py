"""Eight voice notes of 25 MB at once, and what they cost the agent's memory: ``edge-cli run``
as its own process, polling a loopback Bot API (a local Bot API server: it serves files past the
public one's 20 MB) and transcribing through a loopback OpenAI-compatible server that counts the
uploads rather than keeping them. Eight people each send a note at ``max_bytes`` in one
``getUpdates`` batch.

The agent's idle RSS is read once it has answered a small note (so the code a note needs is
loaded), its peak is the kernel's high-water mark (``VmHWM``, reset through ``clear_refs`` at
that moment) until the eighth transcript is shown. Used by ``tests/channels/test_voice_memory.py``
(the bound) and ``bench/bench_voice.py`` (the figure)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.fakes.telegram_server import FakeTelegram, telegram_config, texts_to
from tests.fakes.transcription_server import FakeTranscription

ROOT = Path(__file__).resolve().parents[2]
NOTE_BYTES = 25_000_000
PEOPLE = list(range(101, 109))


@dataclass(frozen=True)
class VoiceLoad:
    idle_kib: int
    """RSS once a small note was answered."""
    peak_kib: int
    """The highest RSS from then until every note was answered."""
    seconds: float
    """From the batch handed out to the last transcript shown."""
    most_uploads_at_once: int
    uploaded: list[int]
    leftovers: list[str]
    """Files left in ``<state>/voice`` after the notes were answered."""

    @property
    def added_kib(self) -> int:
        return self.peak_kib - self.idle_kib


def memory_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def wait(predicate: object, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"agent exited {proc.returncode} or timed out; its log:\n"
                                 + log.read_text()[-4000:])
        time.sleep(0.05)


def shown(telegram: FakeTelegram, people: list[int]) -> int:
    return sum(1 for person in people for text in texts_to(telegram, person) if text.startswith("🎤"))


def measure(tmp: Path, notes: int = len(PEOPLE), size: int = NOTE_BYTES) -> VoiceLoad:
    people = PEOPLE[:notes]
    state, log = tmp / "state", tmp / "agent.log"
    audio = b"OggS" + bytes(size - 4)
    with FakeTelegram() as telegram, FakeTranscription(keep_audio=False) as whisper:
        telegram.DOWNLOAD_LIMIT = 2_000_000_000  # a local Bot API server's
        allowed = "[" + ", ".join(f'"{p}"' for p in people) + "]"
        config = tmp / "config.toml"
        config.write_text(telegram_config(telegram, allowed=allowed) + (
            f'[transcription]\nbase_url = "{whisper.base_url}"\nmodel = "whisper-test"\n'
            f"max_bytes = {size}\n"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
        env.update(EDGE_CONFIG=str(config), EDGE_STATE_DIR=str(state),
                   EDGE_MEMORY__EMBEDDER="none")
        with log.open("wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "edge", "run"], env=env, cwd=ROOT,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err)
        try:
            wait(lambda: telegram.sent("getMe") or any(m == "getMe" for m, _ in telegram.calls),
                 proc, log, 60)
            telegram.push_voice(people[0], b"OggS" + bytes(1000))
            wait(lambda: shown(telegram, people[:1]) == 1, proc, log, 60)
            time.sleep(0.5)  # its answer's tail: the reply to the transcript
            idle = memory_kib(proc.pid, "VmRSS")
            Path(f"/proc/{proc.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
            started = time.monotonic()
            telegram.push_raw(*[voice_update(telegram, person, audio) for person in people])
            wait(lambda: shown(telegram, people) == notes + 1, proc, log, 300)
            seconds = time.monotonic() - started
            peak = memory_kib(proc.pid, "VmHWM")
            leftovers = sorted(p.name for p in (state / "voice").iterdir())
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    return VoiceLoad(idle, peak, seconds, whisper.most_at_once,
                     [r.size for r in whisper.requests], leftovers)


def voice_update(telegram: FakeTelegram, person: int, audio: bytes) -> dict[str, object]:
    """A voice message from ``person`` whose file is ``audio``, for one batch of updates."""
    file_id = f"file{len(telegram.files) + 1}"
    telegram.files[file_id] = audio
    telegram.next_message_id += 1
    return {"message": {"message_id": telegram.next_message_id, "date": int(time.time()),
                        "from": {"id": person, "is_bot": False, "first_name": f"u{person}"},
                        "chat": {"id": person, "type": "private"},
                        "voice": {"file_id": file_id, "file_unique_id": f"u{file_id}",
                                  "duration": 60, "mime_type": "audio/ogg",
                                  "file_size": len(audio)}}}
