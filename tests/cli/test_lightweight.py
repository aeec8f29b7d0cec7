"""Quick commands stay quick: the client path imports no config schema, httpx, numpy or asyncio."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import ROOT

HEAVY = ("pydantic", "httpx", "numpy", "onnxruntime", "gpiozero", "asyncio")


def imported_after(code: str, env) -> set[str]:
    probe = (f"{code}\nimport sys\nprint(' '.join(k for k, v in sys.modules.items() "
             "if getattr(v, '__spec__', None) is not None))")
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return set(out.stdout.split())


def test_client_path_modules_are_light(isolated_env):
    mods = imported_after("import edge.cli.main, edge.cli.oneshot, edge.control.client, "
                          "edge.status, edge.cli.output; edge.cli.main.build_parser()", isolated_env)
    assert not {m for m in mods if m.split(".")[0] in HEAVY}


def test_the_agent_does_not_import_httpx_command_line_client(isolated_env):
    mods = imported_after("import edge.cli.main; edge.cli.main.skip_httpx_command_line()\n"
                          "from edge.config.loader import load_config; load_config(None)\n"
                          "import edge.runtime, edge.providers.openai\n"
                          "from edge.tools.gpio import WriteArgs; WriteArgs(pin='led', value='on')",
                          isolated_env)
    assert "edge.records" in mods and "httpx" in mods
    assert not {"pydantic", "pydantic_core"} & mods  # the agent has no pydantic at all
    assert not {"click", "pygments"} & mods  # httpx's command-line client stays unimported


def test_status_through_the_daemon_stays_light(isolated_env, tmp_path):
    """The whole `edge-cli status` run against a daemon's socket (here a stand-in that answers
    like one) imports nothing heavy: asyncio alone would cost about 15 ms."""
    import json
    import socketserver
    import threading
    from pathlib import Path

    class Daemon(socketserver.StreamRequestHandler):
        def handle(self):
            self.rfile.readline()
            status = {"daemon": {"running": True, "version": "x", "pid": 1, "uptime_seconds": 1}}
            self.wfile.write(json.dumps({"ok": True, "exit_code": 0, "data": status}).encode()
                             + b"\n")

    sock = Path(isolated_env["EDGE_STATE_DIR"]) / "control.sock"
    sock.parent.mkdir(parents=True, exist_ok=True)
    with socketserver.ThreadingUnixStreamServer(str(sock), Daemon) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        mods = imported_after("from edge.cli.main import main\nassert main(['status']) == 0",
                              isolated_env)
        server.shutdown()
    assert not {m for m in mods if m.split(".")[0] in HEAVY}
    assert "logging" not in mods  # about 6 ms more on every status
