"""Quick commands stay quick: the client path imports no config schema (pydantic), httpx, numpy or
asyncio; the agent itself does import pydantic."""

from __future__ import annotations

import subprocess
import sys

import pytest

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
    assert {"pydantic", "pydantic_core", "httpx"} <= mods  # the agent validates with pydantic
    assert not {"click", "pygments"} & mods  # httpx's command-line client stays unimported


@pytest.mark.parametrize("argv", [["status"], ["pins"], ["gpio", "read", "led"],
                                  ["gpio", "write", "led", "on"], ["gpio", "pwm", "led", "0.5"]])
def test_commands_through_the_daemon_stay_light(isolated_env, argv):
    """The whole `edge-cli status` (pins, gpio) run against a daemon's socket (here a stand-in
    that answers like one) imports nothing heavy: asyncio alone would cost about 15 ms, pydantic
    about 40."""
    import json
    import socketserver
    import threading
    from pathlib import Path

    class Daemon(socketserver.StreamRequestHandler):
        def handle(self):
            self.rfile.readline()
            status = {"daemon": {"running": True, "version": "x", "pid": 1, "uptime_seconds": 1}}
            self.wfile.write(json.dumps({"ok": True, "exit_code": 0, "message": "done",
                                         "data": status}).encode() + b"\n")

    sock = Path(isolated_env["EDGE_STATE_DIR"]) / "control.sock"
    sock.parent.mkdir(parents=True, exist_ok=True)
    with socketserver.ThreadingUnixStreamServer(str(sock), Daemon) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        mods = imported_after(f"from edge.cli.main import main\nassert main({argv!r}) == 0",
                              isolated_env)
        server.shutdown()
    assert not {m for m in mods if m.split(".")[0] in HEAVY}
    assert not {"dataclasses", "inspect"} & mods  # inspect (ast, dis, tokenize): about 6 ms
    if argv == ["status"]:
        assert "logging" not in mods  # about 6 ms more on every status


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["gpio", "--help"],
                                  ["logs", "--source", "file", "-n", "5"]])
def test_version_help_and_logs_stay_light(isolated_env, argv):
    from pathlib import Path

    log = Path(isolated_env["EDGE_STATE_DIR"]) / "edge-agent.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("level=info logger=edge event=ready\n")
    mods = imported_after(f"from edge.cli.main import main\ntry:\n    code = main({argv!r})\n"
                          "except SystemExit as exc:\n    code = exc.code\nassert code == 0, code",
                          isolated_env)
    assert not {m for m in mods if m.split(".")[0] in HEAVY}
    if argv == ["--version"]:
        assert not {"typing", "dataclasses", "argparse"} & mods  # next to a bare interpreter


def test_the_edge_cli_script_adds_only_edge_to_a_bare_interpreter(isolated_env):
    """``edge-cli --version`` from the script pip installs (scripts/edge-cli, not a console-script
    wrapper, which imports ``re``): what it imports beyond ``python -c pass`` is edge's own three
    small modules. Without site-packages (``-S``), so the venv's .pth files do not count (site
    would have imported os)."""
    def imported(*argv: str) -> list[str]:
        done = subprocess.run([sys.executable, "-S", "-X", "importtime", *argv],
                              env={**isolated_env, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
                              capture_output=True, text=True, check=True)
        return [line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:") and "package" not in line]

    bare = set(imported("-c", "import os"))
    added = [m for m in imported(str(ROOT / "scripts" / "edge-cli"), "--version") if m not in bare]
    assert added and {m.split(".")[0] for m in added} == {"edge"}, added
