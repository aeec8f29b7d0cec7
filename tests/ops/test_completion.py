"""Shell completion generated from the argparse tree, run in real bash and zsh."""

import shutil
import subprocess

import pytest

from edge.cli.completion_cmd import bash_script, zsh_script
from edge.cli.main import build_parser, main


@pytest.fixture(scope="module")
def scripts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("completion")
    parser = build_parser()
    (folder / "edge-cli.bash").write_text(bash_script(parser))
    (folder / "_edge-cli").write_text(zsh_script(parser))
    return folder


def bash_complete(scripts, line: str) -> list[str]:
    words = line.split(" ")
    program = (f"source {scripts / 'edge-cli.bash'}\n"
               f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
               "_edge_cli; printf '%s\\n' \"${COMPREPLY[@]}\"")
    out = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def zsh_complete(scripts, line: str) -> list[str]:
    words = line.split(" ")
    program = (
        "compdef() { :; }; compadd() { [[ $1 == -- ]] && shift; print -l -- \"$@\"; }\n"
        "_files() { print -- __FILES__; }\n"
        f"source {scripts / '_edge-cli'}\n"
        f"words=({' '.join(repr(w) for w in words)}); CURRENT={len(words)}\n"
        "_edge_cli")
    out = subprocess.run(["zsh", "-f", "-c", program], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.parametrize("complete", ["bash", "zsh"])
def test_commands_subcommands_choices_and_options(scripts, complete):
    if not shutil.which(complete):
        pytest.fail(f"{complete} missing: `make test` installs it (deploy/test-packages.txt)")
    run = bash_complete if complete == "bash" else zsh_complete
    top = run(scripts, "edge-cli ")
    assert {"run", "status", "gpio", "doctor", "logs", "service", "completion"} <= set(top)
    assert set(run(scripts, "edge-cli gpio ")) >= {"read", "write", "pwm"}
    write = run(scripts, "edge-cli --config x.toml gpio write led ")
    assert {"on", "off"} <= set(write)
    assert "--follow" in run(scripts, "edge-cli logs --")
    assert set(run(scripts, "edge-cli logs --source ")) == {"auto", "journal", "file"}
    assert set(run(scripts, "edge-cli service ")) >= {"install", "uninstall", "status"}
    source = run(scripts, "edge-cli service install --source ")  # a path, not logs' choices
    assert source == ["__FILES__"] if complete == "zsh" else "pyproject.toml" in source


def test_bash_completes_files_for_config(scripts, tmp_path):
    (tmp_path / "agent.toml").write_text("")
    assert bash_complete(scripts, f"edge-cli status --config {tmp_path}/ag") == \
        [f"{tmp_path}/agent.toml"]
    assert zsh_complete(scripts, "edge-cli status --config ") == ["__FILES__"]


def test_completion_command_prints_the_script(capsys):
    assert main(["completion", "bash"]) == 0
    assert "complete -F _edge_cli edge-cli" in capsys.readouterr().out
    assert main(["completion", "zsh"]) == 0
    assert capsys.readouterr().out.startswith("#compdef edge-cli")
