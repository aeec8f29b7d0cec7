"""Quick commands stay quick: the client path imports no pydantic, httpx, numpy or asyncio."""

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
    assert "pydantic" in mods and "httpx" in mods
    assert not {"click", "pygments"} & mods  # httpx's command-line client stays unimported
