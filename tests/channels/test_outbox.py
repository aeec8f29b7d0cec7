"""The outbox decides which files ``[IMAGE:...]`` may send: inside the outbox after resolving
symlinks and ``..``, a real image by its first bytes, within the size limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edge.channels.outbox import Outbox
from edge.config.model import AgentConfig

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32
JPEG = b"\xff\xd8\xff\xe0" + b"\0" * 32
GIF = b"GIF89a" + b"\0" * 32
WEBP = b"RIFF\x24\0\0\0WEBPVP8 " + b"\0" * 32


@pytest.fixture
def outbox(tmp_path) -> Outbox:
    box = tmp_path / "workspace" / "outbox"
    box.mkdir(parents=True)
    (tmp_path / "config.toml").write_text('bot_token = "123:SECRET"\n')
    return Outbox(box, max_bytes=1_000)


@pytest.mark.parametrize("name,data", [("a.png", PNG), ("b.jpg", JPEG), ("c.gif", GIF),
                                       ("d.webp", WEBP)])
async def test_real_images_in_the_outbox_are_sent(outbox, name, data):
    (outbox.directory / name).write_bytes(data)
    assert await outbox.image(str(outbox.directory / name)) == (outbox.directory / name).resolve()
    assert await outbox.image(name) == (outbox.directory / name).resolve()  # relative to it


async def test_files_outside_the_outbox_are_refused_like_missing_ones(outbox, tmp_path):
    config = tmp_path / "config.toml"
    (outbox.directory / "link.png").symlink_to(config)
    (outbox.directory / "etc.png").symlink_to("/etc/passwd")
    (tmp_path / "outside.png").write_bytes(PNG)
    os.symlink(outbox.directory.parent, outbox.directory / "up")
    for written in ("/etc/passwd", str(config), f"{outbox.directory}/../../config.toml",
                    "../../config.toml", "link.png", "etc.png", str(tmp_path / "outside.png"),
                    "up/outbox/../../config.toml", "/nonexistent.png", "missing.png", "",
                    str(outbox.directory), "/dev/zero", "/proc/self/environ"):
        assert await outbox.image(written) is None, written


async def test_only_image_content_and_size_count(outbox):
    (outbox.directory / "fake.png").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (outbox.directory / "big.png").write_bytes(PNG + b"\0" * 1_000)
    (outbox.directory / "empty.png").write_bytes(b"")
    (outbox.directory / "sub").mkdir()
    os.mkfifo(outbox.directory / "pipe.png")
    for name in ("fake.png", "big.png", "empty.png", "sub", "pipe.png"):
        assert await outbox.image(name) is None, name


async def test_a_missing_outbox_sends_nothing(tmp_path):
    (tmp_path / "a.png").write_bytes(PNG)
    assert await Outbox(tmp_path / "nope").image(str(tmp_path / "a.png")) is None


def test_the_default_outbox_is_in_the_workspace(tmp_path):
    assert AgentConfig().outbox_dir(tmp_path) == tmp_path / "workspace" / "outbox"
    assert AgentConfig(workspace="/srv/ws").outbox_dir(tmp_path) == Path("/srv/ws/outbox")
    assert AgentConfig(outbox="/srv/out").outbox_dir(tmp_path) == Path("/srv/out")
    made = Outbox.from_config(AgentConfig(), tmp_path)
    assert made.directory.is_dir() and made.max_bytes == AgentConfig().image_max_bytes
