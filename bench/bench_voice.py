"""Voice notes (issue 37): what eight notes of 25 MB at once cost the agent's memory. ``edge-cli
run`` as its own process, a loopback Bot API serving the notes and a loopback transcription
server (``tests/channels/voice_load.py``). Figures: the agent's RSS once idle (a small note
answered), its peak while the eight are fetched and transcribed (two at a time, each streamed
into a file and uploaded from it), and how long they took over loopback. Target: the peak within
30 MB of idle (the issue measured 50 MB -> 445 MB before the queue)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.process import row
from tests.channels.voice_load import NOTE_BYTES, PEOPLE, measure


def mb(kib: int) -> str:
    return f"{kib / 1024:.1f} MB"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        load = measure(Path(tmp))
    print(f"{len(PEOPLE)} voice notes of {NOTE_BYTES / 1e6:.0f} MB at once, from {len(PEOPLE)} "
          "people (Telegram, max_bytes 25 MB)")
    row("RSS idle (after a small note)", mb(load.idle_kib))
    row("RSS peak while the notes are handled", mb(load.peak_kib))
    row("  added by the notes", f"+{mb(load.added_kib)}", "target < +30 MB")
    row("uploads at once (most)", str(load.most_uploads_at_once), "bound 2")
    row("all eight fetched and transcribed", f"{load.seconds:.1f} s")


if __name__ == "__main__":
    main()
