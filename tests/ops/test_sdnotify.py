"""sd_notify against a real AF_UNIX datagram socket, as systemd listens on one."""

import asyncio
import os
import socket

import pytest

from edge.core.sdnotify import LoopWatchdog, Notifier, ServiceNotifier, watchdog_interval


@pytest.fixture
def notify_socket(tmp_path):
    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2)
    yield path, sock
    sock.close()


def received(sock) -> list[str]:
    messages = []
    sock.setblocking(False)
    try:
        while True:
            messages.append(sock.recv(4096).decode())
    except BlockingIOError:
        pass
    sock.settimeout(2)
    return messages


def test_ready_and_status_arrive_as_one_datagram(notify_socket):
    path, sock = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": str(path)})
    assert notifier.notify(ready=True, status="ready: 1/1 boards\nconnected")
    assert sock.recv(4096).decode() == "READY=1\nSTATUS=ready: 1/1 boards connected"
    notifier.close()


def test_abstract_namespace_socket():
    name = f"edge-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(b"\0" + name.encode())
    sock.settimeout(2)
    try:
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).notify(stopping=True)
        assert sock.recv(4096) == b"STOPPING=1"
    finally:
        sock.close()


def test_outside_systemd_nothing_is_sent():
    notifier = Notifier({})
    assert not notifier.enabled
    assert notifier.notify(ready=True) is False


def test_vanished_socket_is_reported_not_raised(tmp_path, caplog):
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone")})
    assert notifier.notify(watchdog=True) is False
    assert "sd_notify_failed" in caplog.text


def test_watchdog_interval_honours_watchdog_pid():
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 30.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}) == 30.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "0"}) is None
    assert watchdog_interval({}) is None


async def test_watchdog_pings_from_the_loop_and_stops_when_it_hangs(notify_socket):
    path, sock = notify_socket
    watchdog = LoopWatchdog(Notifier({"NOTIFY_SOCKET": str(path)}), timeout_seconds=0.1)
    watchdog.start()
    await asyncio.sleep(0.32)
    pings_while_alive = watchdog.pings
    assert pings_while_alive >= 5  # every 0.05 s
    assert set(received(sock)) == {"WATCHDOG=1"}
    import time

    time.sleep(0.3)  # the loop is blocked: no callback can run, so no ping is sent
    assert watchdog.pings == pings_while_alive
    assert received(sock) == []
    watchdog.stop()


async def test_service_notifier_lifecycle(notify_socket):
    path, sock = notify_socket
    env = {"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "200000"}
    service = ServiceNotifier(env)
    service.ready("ready: 1/1 boards connected, channels none")
    assert sock.recv(4096) == b"READY=1\nSTATUS=ready: 1/1 boards connected, channels none"
    assert sock.recv(4096) == b"WATCHDOG=1"
    service.status("channel telegram failed")
    service.stopping("SIGTERM")
    rest = received(sock)
    assert "STATUS=channel telegram failed" in rest
    assert rest[-1] == "STOPPING=1\nSTATUS=stopping: SIGTERM"
    await asyncio.sleep(0.25)
    assert received(sock) == []  # no pings after STOPPING
    service.close()
