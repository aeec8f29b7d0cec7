"""The whole message path in a real `edge-cli run` process: the CLI channel on pipes, a scripted
loopback model speaking the OpenAI format (tool calls, a context overflow, a slow reply for /stop
and the timeout), and a SIGKILL in the middle of a stream of messages."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time

import pytest

from edge.agent.context import SUMMARY_PROMPT
from edge.agent.sessions import read_transcript
from tests.fakes.openai_server import OpenAIServer, completion, error_body
from tests.helpers import EDGE_CLI, ROOT


class Agent:
    """`edge-cli run` with stdin/stdout pipes; ``ask`` writes a line and waits for a reply line."""

    def __init__(self, env):
        self.proc = subprocess.Popen([*EDGE_CLI, "run"], env=env, cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.buffer = b""

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def read_line(self, timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no reply; stderr: {self.proc.stderr.read1(65536)!r}"
            if self.selector.select(remaining):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, "agent closed stdout"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def ask(self, line: str) -> str:
        self.send(line)
        return self.read_line()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def last_user(body) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def scripted_model(body):
    """Behaviour chosen by the last user message, as a test script."""
    messages = body["messages"]
    text = last_user(body)
    if messages[0]["content"] == SUMMARY_PROMPT:
        return 200, completion("Earlier: the user asked about the LED.")
    if messages[-1]["role"] == "tool":
        return 200, completion("Done: " + messages[-1]["content"])
    if "led on" in text:
        return 200, completion(None, [{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}])
    if "overflow" in text and not any("Conversation Summary" in m["content"] for m in messages[:1]):
        return error_body(400, "This model's maximum context length is 8192 tokens. However, you "
                               "requested 9000 tokens. Please reduce the length of the messages.")
    if "slow" in text:
        time.sleep(3)
        return 200, completion("finally")
    return 200, completion(f"echo: {text}")


@pytest.fixture
def model():
    with OpenAIServer(responder=scripted_model) as server:
        yield server


def agent_env(env, server, **extra):
    return dict(env, EDGE_PROVIDER__BASE_URL=server.base_url, EDGE_PROVIDER__MODEL="scripted",
                EDGE_AGENT__DEBOUNCE_MS="0", **extra)


def test_cli_channel_through_the_whole_pipeline(isolated_env, model, tmp_path):
    env = agent_env(isolated_env, model, EDGE_AGENT__MESSAGE_TIMEOUT_SECONDS="1",
                    EDGE_AGENT__TIMEOUT_SCALE_CAP="1",
                    EDGE_AGENT__LOCAL_INTENTS="false",  # the full profile's path, whatever is asked
                    EDGE_PROVIDER__COMPACT_PROFILE="false")
    agent = Agent(env)
    try:
        assert agent.ask("please turn the led on") == "Done: gpio:GPIO17 (led) set on"
        assert [agent.read_line(), agent.read_line()] == ["", "Receipt: led: on (read back on)"]
        assert agent.ask("/gpio led") == "gpio:GPIO17 (led) is on"
        assert agent.ask("hello there") == "echo: hello there"
        assert agent.ask("this will overflow") == "echo: this will overflow"
        agent.send("something slow")
        time.sleep(0.3)
        assert agent.ask("/stop") == "Stopped."
        assert agent.ask("slow again") .startswith("The request timed out after 1 s")
        agent.proc.stdin.close()
        assert agent.proc.wait(timeout=20) == 1  # a piped run with a turn left unanswered
    finally:
        agent.close()
    sessions = json.loads((tmp_path / "state" / "sessions" / "sessions.json").read_text())
    (entry,) = sessions.values()
    assert entry["compaction_count"] == 1
    assert "the user asked about the LED" in entry["summary"]
    transcript = read_transcript(tmp_path / "state" / "sessions" / f"{entry['session_id']}.jsonl")
    contents = [r["content"] for r in transcript]
    assert contents[-4:] == ["this will overflow", "echo: this will overflow", "slow again",
                             "[Task timed out]"]
    assert "something slow" not in contents  # the stopped turn saved nothing


def test_sigkill_mid_stream_loses_no_acknowledged_turn(isolated_env, model, tmp_path):
    env = agent_env(isolated_env, model)
    agent = Agent(env)
    acknowledged = []
    try:
        for i in range(12):
            reply = agent.ask(f"message {i}")
            assert reply == f"echo: message {i}"
            acknowledged.append(i)
        for i in range(12, 20):  # a burst in flight when the power goes
            agent.send(f"message {i}")
        time.sleep(0.05)
        agent.proc.send_signal(signal.SIGKILL)
        agent.proc.wait()
        while True:  # replies that made it out before the kill were acknowledged too
            try:
                line = agent.read_line(timeout=0.2)
            except (AssertionError, OSError):
                break
            acknowledged.append(int(line.rsplit(" ", 1)[1]))
    finally:
        agent.close()
    directory = tmp_path / "state" / "sessions"
    sessions = json.loads((directory / "sessions.json").read_text())
    (entry,) = sessions.values()
    contents = [r["content"] for r in read_transcript(directory / f"{entry['session_id']}.jsonl")]
    for i in acknowledged:
        assert f"message {i}" in contents and f"echo: message {i}" in contents
    restarted = subprocess.run([*EDGE_CLI, "run"], env=env, cwd=ROOT, input=b"after restart\n",
                               capture_output=True, timeout=60)
    assert restarted.returncode == 0 and restarted.stdout.decode().strip() == "echo: after restart"
