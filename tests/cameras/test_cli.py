"""``edge-cli camera snapshot NAME --output FILE.jpg`` as a user runs it: the running agent takes
the picture (it owns its cameras) and answers over its control socket; with no agent, the
command takes it itself. Either way the file is the camera's JPEG."""

from __future__ import annotations

import io
import json
import os
import signal

from PIL import Image

from tests.cameras.standin import RED, calls, install, near
from tests.helpers import cli, start_agent

CONFIG = """
[cameras.door]
type = "rpicam"
width = 480
height = 320
settle_seconds = 0.1
"""


def env_with_camera(isolated_env, write_config, tmp_path) -> tuple[dict[str, str], object]:
    log = install(tmp_path / "bin")
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG)),
           "PATH": f"{tmp_path / 'bin'}{os.pathsep}{isolated_env['PATH']}"}
    return env, log


def the_door(path) -> bool:
    picture = Image.open(io.BytesIO(path.read_bytes()))
    return (picture.format == "JPEG" and picture.size == (480, 320)
            and near(picture.convert("RGB").getpixel((240, 40)), RED))


def test_through_the_running_agent_then_directly(isolated_env, write_config, tmp_path):
    env, log = env_with_camera(isolated_env, write_config, tmp_path)
    agent = start_agent(env)
    try:
        out = cli("camera", "snapshot", "door", "--output", str(tmp_path / "a.jpg"), "--json",
                  env=env)
        payload = json.loads(out.stdout)
        assert out.returncode == 0 and payload["via"] == "daemon", (payload, out.stderr)
        assert calls(log)[0]["ppid"] == agent.pid  # the agent ran the camera
        text = cli("camera", "snapshot", "door", "--output", str(tmp_path / "b.jpg"), env=env)
        assert text.returncode == 0 and text.stdout.startswith(f"wrote {tmp_path / 'b.jpg'} (door, ")
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
    assert the_door(tmp_path / "a.jpg") and the_door(tmp_path / "b.jpg")
    data = payload["data"]
    assert data["bytes"] == (tmp_path / "a.jpg").stat().st_size and "jpeg_base64" not in data
    assert (data["camera"], data["width"], data["height"]) == ("door", 480, 320)

    out = cli("camera", "snapshot", "door", "--output", str(tmp_path / "c.jpg"), "--json", env=env)
    assert out.returncode == 0 and json.loads(out.stdout)["via"] == "direct"
    assert the_door(tmp_path / "c.jpg") and len(calls(log)) == 3
    assert calls(log)[2]["ppid"] != agent.pid

    listed = json.loads(cli("camera", "--json", env=env).stdout)
    assert listed["data"]["cameras"] == [{"name": "door", "type": "rpicam", "width": 480,
                                          "height": 320, "rotation": 0}]


def test_a_failing_camera_exits_1_and_writes_nothing(isolated_env, write_config, tmp_path):
    env, _ = env_with_camera(isolated_env, write_config, tmp_path)
    install(tmp_path / "bin", mode="fail")
    out = cli("camera", "snapshot", "door", "--output", str(tmp_path / "x.jpg"), "--json", env=env)
    payload = json.loads(out.stdout)
    assert out.returncode == 1 and payload["exit_code"] == 1
    assert "no cameras available" in payload["error"]
    assert not (tmp_path / "x.jpg").exists()


def test_the_command_waits_as_long_as_the_camera_may_take(isolated_env, write_config, tmp_path):
    """A picture that takes 11 s (longer than the control socket's usual 10 s wait) still comes
    back through the agent: the command waits the camera's timeout_seconds and a margin."""
    install(tmp_path / "bin", mode="slow")
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG + "timeout_seconds = 30\n")),
           "PATH": f"{tmp_path / 'bin'}{os.pathsep}{isolated_env['PATH']}"}
    agent = start_agent(env)
    try:
        out = cli("camera", "snapshot", "door", "--output", str(tmp_path / "slow.jpg"), "--json",
                  env=env, timeout=90)
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
    payload = json.loads(out.stdout)
    assert out.returncode == 0 and payload["via"] == "daemon", payload
    assert payload["data"]["seconds"] > 11 and the_door(tmp_path / "slow.jpg")
