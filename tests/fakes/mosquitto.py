"""A real Mosquitto broker (Debian's ``mosquitto``, deploy/test-packages.txt) on a free loopback
port, with a generated config: anonymous, with a password file (``mosquitto_passwd``), or TLS with
a CA made by the test (openssl). Never the system service: each broker is a child process of the
test and is killed in teardown.

>>> # with Mosquitto(tmp_path, users={"edge": "s3cret"}, tls=True) as broker: broker.url
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import shutil
import socket
import subprocess
import time
from pathlib import Path

import aiomqtt
import pytest

BINARY = "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def make_ca(folder: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1/localhost: (ca, cert, key)."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca, key, csr, cert = (folder / n for n in ("ca.key", "ca.crt", "server.key",
                                                        "server.csr", "server.crt"))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    run("req", "-x509", *ec, "-keyout", str(ca_key), "-out", str(ca), "-days", "2",
        "-subj", "/CN=edge-agent test CA")
    run("req", *ec, "-keyout", str(key), "-out", str(csr), "-subj", "/CN=localhost")
    ext = folder / "san.ext"
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
        "-out", str(cert), "-days", "2", "-extfile", str(ext))
    return ca, cert, key


class Mosquitto:
    def __init__(self, folder: Path, *, users: dict[str, str] | None = None, tls: bool = False,
                 port: int | None = None, persistence: bool = False):
        """``persistence``: retained messages and persistent sessions survive a :meth:`stop`
        and :meth:`start` (as with Debian's packaged config)."""
        if not shutil.which(BINARY):
            pytest.fail("mosquitto is not installed (deploy/test-packages.txt; `make test` "
                        "installs it)")
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.tls = tls
        self.ca: Path | None = None
        lines = [f"listener {self.port} 127.0.0.1",
                 f"persistence true\npersistence_location {folder}/" if persistence
                 else "persistence false",
                 f"allow_anonymous {'false' if users else 'true'}", "log_dest stderr",
                 "log_type error", "log_type warning", "log_type notice"]
        if getpass.getuser() == "root":
            lines.append("user root")  # else it drops to the 'mosquitto' user, who cannot read tmp
        if users:
            passwd = folder / "passwd"
            for index, (name, password) in enumerate(users.items()):
                subprocess.run(["mosquitto_passwd", "-b", *(["-c"] if index == 0 else []),
                                str(passwd), name, password], check=True, capture_output=True)
            lines.append(f"password_file {passwd}")
        if tls:
            self.ca, cert, key = make_ca(folder / "tls")
            lines += [f"cafile {self.ca}", f"certfile {cert}", f"keyfile {key}"]
        self.conf = folder / "mosquitto.conf"
        self.conf.write_text("\n".join(lines) + "\n")
        self.log = folder / "mosquitto.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> Mosquitto:
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen([BINARY, "-c", str(self.conf)], stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("mosquitto did not listen in time") from None
                time.sleep(0.02)

    def stop(self) -> None:
        """A clean stop (``systemctl restart mosquitto``, a reboot): the broker publishes its
        clients' last wills and, with persistence, saves what is retained."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def kill(self) -> None:
        """Gone at once, as a crashed or rebooted broker (no goodbye to its clients)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.proc = None

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()


class Watcher:
    """A second client on the broker, as Home Assistant or a person with mosquitto_sub would be:
    subscribes to ``topics`` and keeps every message; publishes commands.

    >>> # async with Watcher(broker, "edge-agent/#") as seen: await seen.wait("edge-agent/n/led", "ON")
    """

    def __init__(self, broker: Mosquitto, *topics: str, **client_options: object):
        self.topics = topics or ("#",)
        self.client = aiomqtt.Client("127.0.0.1", broker.port, **client_options)  # type: ignore[arg-type]
        self.messages: list[tuple[str, bytes, bool]] = []
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Watcher:
        await self.client.__aenter__()
        for topic in self.topics:
            await self.client.subscribe(topic, qos=1)
        self._task = asyncio.create_task(self._collect())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        with contextlib.suppress(aiomqtt.MqttError):  # the broker may be gone already
            await self.client.__aexit__(None, None, None)

    async def _collect(self) -> None:
        async for message in self.client.messages:
            payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
            self.messages.append((message.topic.value, payload, bool(message.retain)))

    def payloads(self, topic: str) -> list[bytes]:
        return [payload for t, payload, _ in self.messages if t == topic]

    async def wait(self, topic: str, payload: str | bytes | None = None, timeout: float = 5.0,
                   after: int = 0) -> bytes:
        """The first message on ``topic`` (equal to ``payload`` if given) among those received
        after the first ``after`` ones; AssertionError if none comes in time."""
        want = payload.encode() if isinstance(payload, str) else payload
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for t, got, _ in self.messages[after:]:
                if t == topic and (want is None or got == want):
                    return got
            if asyncio.get_running_loop().time() > deadline:
                seen = [m for m in self.messages if m[0] == topic]
                raise AssertionError(f"no {want!r} on {topic} in {timeout} s; saw {seen[-5:]}")
            await asyncio.sleep(0.01)

    async def publish(self, topic: str, payload: str | bytes, *, retain: bool = False) -> None:
        await self.client.publish(topic, payload, qos=1, retain=retain)
