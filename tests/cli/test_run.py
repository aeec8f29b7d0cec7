"""``edge-cli run``'s command line: it offers --config but not --json, which it would refuse."""

from __future__ import annotations

import json

from tests.helpers import cli


def test_run_help_offers_config_but_not_json(isolated_env):
    out = cli("run", "--help", env=isolated_env)
    assert out.returncode == 0
    assert "--config PATH" in out.stdout
    assert "--json" not in out.stdout


def test_run_with_json_is_refused_with_the_reason(isolated_env):
    for argv in (["run", "--json"], ["--json", "run"]):
        out = cli(*argv, env=isolated_env)
        data = json.loads(out.stdout)
        assert out.returncode == 2 and data["exit_code"] == 2 and data["ok"] is False
        assert "edge-cli status --json" in data["error"]


def test_run_reads_the_config_it_is_given(isolated_env, tmp_path):
    out = cli("run", "--config", str(tmp_path / "missing.toml"), env=isolated_env)
    assert out.returncode == 2 and "missing.toml: config file not found" in out.stderr
