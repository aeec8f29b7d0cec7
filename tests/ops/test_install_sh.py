"""deploy/install.sh against a scratch root: layout, permissions, idempotence, upgrade with
rollback, uninstall and purge. One real venv is built per install (pip, from this checkout), so
the steps share one root and run in order."""

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "install.sh"
AS_ROOT = os.geteuid() == 0


def install(root: Path, *args: str, timeout: float = 600,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", str(SCRIPT), "--root", str(root), "--operator", "", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd)


def edge_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli.main", *args],
                          capture_output=True, text=True, timeout=600, cwd=REPO)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def account(root: Path, table: str, name: str) -> list[str]:
    for line in (root / "etc" / table).read_text().splitlines():
        if line.split(":")[0] == name:
            return line.split(":")
    raise AssertionError(f"{name} not in {table}")


def tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """path -> (mode, uid, gid) for everything but the venv's own files."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[:3] == ("opt", "edge-agent", "releases") and len(rel.parts) > 4:
            continue
        st = path.lstat()
        found[str(rel)] = (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)
    return found


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("scratch-root")
    first = install(root)
    assert first.returncode == 0, first.stderr + first.stdout
    FIRST_OUTPUT[root] = first.stdout
    return root


FIRST_OUTPUT: dict[Path, str] = {}
"""What the first install printed, by its root."""


def current_release(root: Path) -> str:
    return os.readlink(root / "opt/edge-agent/venv")


def test_1_layout_and_permissions(root):
    opt = root / "opt/edge-agent"
    assert current_release(root).startswith("releases/")  # relative: the root can move
    assert (opt / "venv/bin/edge-cli").is_file()
    assert os.readlink(root / "usr/local/bin/edge-cli") == "/opt/edge-agent/venv/bin/edge-cli"

    config = root / "etc/edge-agent/config.toml"
    example = edge_cli("config", "init", "-").stdout
    assert config.read_text() == example
    said = [line for line in FIRST_OUTPUT[root].splitlines()
            if line.startswith("install.sh: ") and str(config) in line]
    assert said == [f"install.sh: wrote {config} from the example; edit it, then: "
                    "edge-cli config check"], said  # not also "keeping existing"
    assert mode(root / "etc/edge-agent") == 0o770 and mode(config) == 0o660
    assert mode(root / "etc/edge-agent/env") == 0o600
    assert mode(root / "var/lib/edge-agent") == 0o750

    unit = root / "etc/systemd/system/edge-agent.service"
    assert unit.read_text() == (REPO / "systemd/edge-agent.service").read_text()
    assert mode(unit) == 0o644
    rules = (root / "etc/udev/rules.d/99-edge-agent.rules").read_text()
    assert 'KERNEL=="gpiochip*", GROUP="gpio"' in rules
    assert "complete -F _edge_cli edge-cli" in \
        (root / "usr/share/bash-completion/completions/edge-cli").read_text()
    assert (root / "usr/share/zsh/vendor-completions/_edge-cli").read_text().startswith(
        "#compdef edge-cli")
    assert (opt / "share/install.sh").read_bytes() == SCRIPT.read_bytes()
    # the MCP sandbox's drop-in is shipped for who wants it, never put in force unasked
    assert (opt / "share/mcp-sandbox.conf").read_bytes() == (
        SCRIPT.parents[1] / "systemd/mcp-sandbox.conf").read_bytes()
    assert not (root / "etc/systemd/system/edge-agent.service.d").exists()

    # the Pi header's pin factory is in the venv, and it is the real lgpio, not the empty 0.0.0.2
    probe = subprocess.run([root / "opt/edge-agent/venv/bin/python", "-c",
                            "import lgpio, gpiozero.pins.lgpio; print(callable(lgpio.gpiochip_open))"],
                           capture_output=True, text=True)
    assert probe.stdout.strip() == "True", probe.stderr
    # the firmware images ship inside the package: flashing needs no sources and no compiler
    shipped = subprocess.run([root / "opt/edge-agent/venv/bin/python", "-c",
                              "from edge.cli.shipped_firmware import shipped_image as s; "
                              "print(s('uno').verified(), s('nucleo_f401re').verified())"],
                             capture_output=True, text=True, cwd=root)
    assert shipped.returncode == 0, shipped.stderr
    for image in shipped.stdout.split():
        assert image.startswith(str(root / "opt/edge-agent/releases")), image
    if AS_ROOT:  # ownership needs root; the CI runs as root
        user = account(root, "passwd", "edge")
        assert user[5:] == ["/var/lib/edge-agent", "/usr/sbin/nologin"]
        uid, gid = int(user[2]), int(user[3])
        st = (root / "var/lib/edge-agent").stat()
        assert (st.st_uid, st.st_gid) == (uid, gid)
        st = config.stat()
        assert (st.st_uid, st.st_gid) == (0, gid)
        for group in ("gpio", "dialout", "i2c", "spi", "video"):
            assert "edge" in account(root, "group", group)[3].split(",")


def test_2_rerun_is_idempotent_and_never_overwrites_config(root):
    config = root / "etc/edge-agent/config.toml"
    config.write_text(config.read_text().replace('level = "info"', 'level = "debug"'))
    before, release = tree(root), current_release(root)
    again = install(root, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "venv present" in again.stdout and "keeping existing" in again.stdout
    assert current_release(root) == release
    assert 'level = "debug"' in config.read_text()
    assert tree(root) == before
    assert (root / "etc/passwd").read_text().count("\nedge:") == 1


def test_3_udev_rules_name_boards_by_serial_number(root):
    config = root / "etc/edge-agent/config.toml"
    original = config.read_text()
    config.write_text(original + '\n[boards.uno]\ntype = "arduino"\nport = "/dev/edge-uno"\n'
                      'serial_number = "85735313233351F0C1A1"\n')
    try:
        assert install(root, timeout=120).returncode == 0
        rules = (root / "etc/udev/rules.d/99-edge-agent.rules").read_text()
        assert ('SUBSYSTEM=="tty", ATTRS{serial}=="85735313233351F0C1A1", SYMLINK+="edge-uno", '
                'GROUP="dialout", MODE="0660"') in rules
        config.write_text(original + '\n[boards.bad]\nserial_number = "x\\" RUN+=\\"/bin/sh"\n')
        refused = install(root, timeout=120)
        assert refused.returncode != 0
        assert "is not a USB serial number" in refused.stderr
        assert "RUN+=" not in (root / "etc/udev/rules.d/99-edge-agent.rules").read_text()
    finally:
        config.write_text(original)


def test_4_upgrade_rolls_back_when_the_new_venv_is_unhealthy(root):
    release = current_release(root)
    # without its dependencies the new venv starts (--version) but cannot check the config
    failed = install(root, "--upgrade", "--pip-args=--no-deps")
    assert failed.returncode == 1
    assert "failed its health check; rolled back" in failed.stderr
    assert current_release(root) == release
    assert [p.name for p in (root / "opt/edge-agent/releases").iterdir()] == [release.split("/")[1]]
    assert not (root / "opt/edge-agent/previous").exists()
    assert subprocess.run([root / "opt/edge-agent/venv/bin/edge-cli", "config", "check", "--config",
                           root / "etc/edge-agent/config.toml"]).returncode == 0


def test_5_upgrade_switches_and_keeps_the_previous_venv(root):
    old = current_release(root)
    upgraded = install(root, "--upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    new = current_release(root)
    assert new != old
    assert os.readlink(root / "opt/edge-agent/previous") == old
    assert sorted(p.name for p in (root / "opt/edge-agent/releases").iterdir()) == \
        sorted([old.split("/")[1], new.split("/")[1]])
    backup = max((root / "var/lib/edge-agent/backups").glob("pre-upgrade-*.tar.gz"),
                 key=lambda p: p.stat().st_mtime)  # test 4's upgrade took one too
    assert f"backed up the config and state to {backup}" in upgraded.stdout
    verified = edge_cli("backup", "verify", str(backup), "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "config/config.toml" in json.loads(verified.stdout)["data"]["files"]


def test_5b_upgrade_from_a_tarball_or_a_checkout_named_by_a_relative_path(root, tmp_path):
    """The README's upgrade paths: a release tarball (here `git archive`, as GitHub serves them)
    and another checkout, each named relative to the working directory, as people type them."""
    tarball = tmp_path / "edge-agent-next.tar.gz"
    subprocess.run(["git", "archive", "--prefix=edge-agent-next/", "-o", str(tarball), "HEAD"],
                   cwd=REPO, check=True)
    old = current_release(root)
    upgraded = install(root, "--upgrade", "--source", tarball.name, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert current_release(root) != old
    assert os.readlink(root / "opt/edge-agent/previous") == old
    checkout = tmp_path / "edge-agent-next"  # a bare relative name, which pip alone would fetch
    subprocess.run(["tar", "-xzf", tarball.name], cwd=tmp_path, check=True)
    again = install(root, "--upgrade", "--source", checkout.name, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "now running edge-cli" in again.stdout
    assert len(list((root / "opt/edge-agent/releases").iterdir())) == 2  # current and previous


def test_6_installed_unit_verifies_against_the_installed_layout(root, tmp_path):
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze missing: `make test` installs the systemd package")
    unit = tmp_path / "edge-agent.service"
    text = (root / "etc/systemd/system/edge-agent.service").read_text()
    unit.write_text(text.replace("/opt/edge-agent", str(root / "opt/edge-agent")))
    verify = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)],
                            capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0, verify.stderr


def test_7_service_status_reports_the_layout(root):
    status = edge_cli("service", "status", "--root", str(root), "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    assert '"venv": true' in status.stdout and '"udev_rules": true' in status.stdout


def test_8_uninstall_keeps_config_and_state(root):
    kept = root / "var/cache/edge-agent"  # what systemd's CacheDirectory would hold
    kept.mkdir(parents=True)
    (kept / "code-run.marshal").write_bytes(b"")
    removed = edge_cli("service", "uninstall", "--root", str(root))
    assert removed.returncode == 0, removed.stderr
    for gone in ("opt/edge-agent", "etc/systemd/system/edge-agent.service",
                 "etc/udev/rules.d/99-edge-agent.rules", "usr/local/bin/edge-cli",
                 "usr/share/bash-completion/completions/edge-cli", "var/cache/edge-agent"):
        assert not (root / gone).exists() and not (root / gone).is_symlink(), gone
    assert (root / "etc/edge-agent/config.toml").is_file()
    assert (root / "var/lib/edge-agent").is_dir()
    assert edge_cli("service", "status", "--root", str(root)).returncode == 1


def test_9_purge_removes_config_state_and_user(root):
    purged = install(root, "--uninstall", "--purge")
    assert purged.returncode == 0, purged.stderr
    assert not (root / "etc/edge-agent").exists() and not (root / "var/lib/edge-agent").exists()
    if AS_ROOT:
        assert "\nedge:" not in (root / "etc/passwd").read_text()


def test_bad_usage_exits_2(tmp_path):
    assert install(tmp_path, "--purge").returncode == 2
    by_name = install(tmp_path, "--source", "edge-agent==0.1.0")  # the index's edge-agent is not us
    assert by_name.returncode == 2 and "not 'edge-agent==0.1.0'" in by_name.stderr
    assert not (tmp_path / "opt").exists()
    assert install(tmp_path, "--frobnicate").returncode == 2
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "edge-agent"\n')
    not_ours = install(tmp_path, "--upgrade", "--source", str(other))
    assert not_ours.returncode == 2 and "does not name edge-agent-pi" in not_ours.stderr
    assert install(tmp_path, "--source", str(tmp_path / "gone.tar.gz")).returncode == 2
    nothing = install(tmp_path, "--upgrade")
    assert nothing.returncode == 1 and "install first" in nothing.stderr


def test_udev_names_clones_without_a_serial_number_by_usb_path():
    from edge.udev import render_rules

    rules = render_rules({"boards": {"nano": {"type": "arduino", "port": "/dev/edge-nano",
                                             "usb_path": "platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1.3:1.0"}}})
    assert ('SUBSYSTEM=="tty", ENV{ID_PATH}=="platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1.3:1.0", '
            'SYMLINK+="edge-nano", GROUP="dialout", MODE="0660"') in rules
    with pytest.raises(Exception, match="not a udev ID_PATH"):
        render_rules({"boards": {"nano": {"usb_path": 'x" RUN+="/bin/sh'}}})
