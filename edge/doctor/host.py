"""Host checks: group membership, device permissions, disk space, clock synchronisation."""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import grp
import os
import pwd
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from edge.cameras.registry import CAMERAS
from edge.config.boards import parse_board
from edge.config.cameras import parse_camera
from edge.config.sensors import AnalogSensorConfig, parse_sensor
from edge.core.storage import filesystem_state
from edge.doctor import Check
from peripherals.base import DeviceNode
from peripherals.exc import BoardUnavailable
from peripherals.factory import BOARDS
from peripherals.pin_factory import load_pin_factory
from peripherals.sensors.factory import SENSORS

SERVICE_GROUPS = ("gpio", "dialout", "i2c", "spi", "video")
"""The unit's SupplementaryGroups: systemd refuses to start the service if one is missing."""
MIN_FREE_BYTES = 100 * 1024 * 1024
LOW_FREE_BYTES = 500 * 1024 * 1024
MIN_FREE_FRACTION = 0.05
CLOCK_FLOOR = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
"""A Pi has no real-time clock: before NTP it may think it is an earlier year, and TLS fails."""


def user_groups(user: str) -> set[str]:
    entry = pwd.getpwnam(user)
    names = {g.gr_name for g in grp.getgrall() if user in g.gr_mem}
    with contextlib.suppress(KeyError):
        names.add(grp.getgrgid(entry.pw_gid).gr_name)
    return names


def device_nodes(raw: dict[str, Any]) -> list[tuple[DeviceNode, str]]:
    """(device node, who opens it: ``board uno``, ``sensor greenhouse``) for every board and
    sensor section, as its type's spec names them. A section that is not valid is left to the
    config check."""
    found: list[tuple[DeviceNode, str]] = []
    for name, table in (raw.get("boards") or {}).items():
        try:
            board = parse_board(table)
        except ValidationError:
            continue
        found.extend((node, f"board {name}") for node in BOARDS.get(board.type).devices(board))
    for name, table in (raw.get("sensors") or {}).items():
        try:
            sensor = parse_sensor(table)
        except ValidationError:
            continue
        if not isinstance(sensor, AnalogSensorConfig):  # a board's pin: the board's device
            found.extend((node, f"sensor {name}") for node in SENSORS.get(sensor.type).devices(sensor))
    for name, table in (raw.get("cameras") or {}).items():
        try:
            camera = parse_camera(table)
        except ValidationError:
            continue
        found.extend((node, f"camera {name}") for node in CAMERAS.get(camera.type).devices(camera))
    return found


def check_groups(raw: dict[str, Any], user: str, unit_installed: bool) -> Check:
    problems, fixes = [], []
    if unit_installed:
        missing = [g for g in SERVICE_GROUPS if not _group_exists(g)]
        if missing:
            problems.append(f"group(s) {', '.join(missing)} missing (the service's "
                            "SupplementaryGroups needs them)")
            fixes.append(" && ".join(f"sudo groupadd --system {g}" for g in missing))
    try:
        member_of = user_groups(user)
    except KeyError:
        return Check("groups", "fail", f"user {user!r} does not exist",
                     "run `sudo deploy/install.sh` (it creates the edge user) or pass --user")
    needed = sorted({node.group for node, _ in device_nodes(raw)})
    absent = [g for g in needed if g not in member_of and user != "root"]
    if absent:
        problems.append(f"{user} is not in group(s) {', '.join(absent)}")
        fixes.append(f"sudo usermod -aG {','.join(absent)} {user}, then log in again "
                     "(the service gets them from SupplementaryGroups)")
    if problems:
        return Check("groups", "fail", "; ".join(problems), "; ".join(fixes))
    detail = f"{user} is in {', '.join(needed)}" if needed else \
        "no device group needed (no real hardware configured)"
    return Check("groups", "ok", detail)


def _group_exists(name: str) -> bool:
    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


def can_access(path: str, user: str) -> bool:
    """Read and write permission for ``user`` by the device's mode bits (root may always)."""
    entry = pwd.getpwnam(user)
    if entry.pw_uid == 0:
        return True
    st = os.stat(path)
    if st.st_uid == entry.pw_uid:
        return st.st_mode & (stat.S_IRUSR | stat.S_IWUSR) == (stat.S_IRUSR | stat.S_IWUSR)
    gids = set(os.getgrouplist(user, entry.pw_gid))
    if st.st_gid in gids:
        return st.st_mode & (stat.S_IRGRP | stat.S_IWGRP) == (stat.S_IRGRP | stat.S_IWGRP)
    return st.st_mode & (stat.S_IROTH | stat.S_IWOTH) == (stat.S_IROTH | stat.S_IWOTH)


def check_devices(raw: dict[str, Any], user: str) -> Check:
    wanted = device_nodes(raw)
    if not wanted:
        return Check("devices", "ok", "no device nodes needed (all boards simulated)")
    problems, fixes, fine = [], [], []
    for node, owner in wanted:
        paths = sorted(glob.glob(node.path))
        if not paths:
            problems.append(f"{node.path} ({owner}) does not exist")
            fixes.append(node.missing)
            continue
        for path in paths:
            if can_access(path, user):
                fine.append(path)
                continue
            st = os.stat(path)
            group = _group_name(st.st_gid)
            problems.append(f"{user} cannot read and write {path} (owner group {group}, "
                            f"mode {stat.filemode(st.st_mode)})")
            fixes.append(f"sudo usermod -aG {group} {user}" if group != "root" else
                         "install the udev rules (`sudo edge-cli service install`), which give "
                         f"the device to the {node.group} group")
    if problems:
        return Check("devices", "fail", "; ".join(problems), "; ".join(dict.fromkeys(fixes)))
    return Check("devices", "ok", f"{user} can use {', '.join(fine)}")


def real_gpio_boards(raw: dict[str, Any]) -> dict[str, str]:
    """{board name: configured pin_factory} for every gpio board that drives the real header."""
    found = {}
    for name, board in (raw.get("boards") or {}).items():
        if isinstance(board, dict) and board.get("type", "gpio") == "gpio" \
                and board.get("simulate", True) is False:
            found[name] = str(board.get("pin_factory", "auto"))
    return found


def check_pin_factory(raw: dict[str, Any]) -> Check:
    """The Pi header's pin factory loads and opens its chip (names factory, chip and model)."""
    wanted = real_gpio_boards(raw)
    if not wanted:
        return Check("pin factory", "ok", "not needed (no gpio board with simulate = false)")
    fine, problems = [], []
    for board, name in wanted.items():
        try:
            loaded = load_pin_factory(name)
        except BoardUnavailable as exc:
            problems.append(f"board {board}: {exc}")
            continue
        fine.append(f"board {board}: {loaded.summary}")
        loaded.factory.close()
    if problems:
        return Check("pin factory", "fail", "; ".join(problems),
                     "follow the fix named above, then `sudo systemctl restart edge-agent`")
    return Check("pin factory", "ok", "; ".join(fine))


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def check_disk(state_dir: Path, min_free: int = MIN_FREE_BYTES, low_free: int = LOW_FREE_BYTES
               ) -> Check:
    probe = state_dir
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    usage = shutil.disk_usage(probe)
    if filesystem_state(probe) == "read-only":
        return Check("disk", "fail", f"{probe} is on a read-only file system: the audit trail, "
                     "readings, memory and conversations cannot be saved",
                     "remount it read-write (`sudo mount -o remount,rw` on its mount point) or "
                     "set [paths] state_dir to a writable directory")
    free_mib = usage.free // (1024 * 1024)
    detail = f"{free_mib} MiB free of {usage.total // (1024 * 1024)} MiB on {probe}"
    fix = ("free space: `sudo journalctl --vacuum-size=50M`, `sudo apt-get clean`, and old "
           f"files under {state_dir}")
    if usage.free < min_free or usage.free < usage.total * MIN_FREE_FRACTION:
        return Check("disk", "fail", detail, fix)
    if usage.free < low_free:
        return Check("disk", "warn", detail + " (getting low)", fix)
    return Check("disk", "ok", detail)


def ntp_synchronized() -> bool | None:
    """True/False from timedatectl or timesyncd's flag file; None when it cannot be told."""
    if shutil.which("timedatectl"):
        try:
            out = subprocess.run(["timedatectl", "show", "-p", "NTPSynchronized", "--value"],
                                 capture_output=True, text=True, timeout=5)
            if out.returncode == 0 and out.stdout.strip() in ("yes", "no"):
                return out.stdout.strip() == "yes"
        except (OSError, subprocess.TimeoutExpired):
            pass
    if Path("/run/systemd/timesync/synchronized").exists():
        return True
    return None


def check_clock(now: dt.datetime | None = None, synchronized: bool | None = None) -> Check:
    now = now or dt.datetime.now(dt.UTC)
    fix = "sudo timedatectl set-ntp true, and make sure the Pi reaches the network at boot"
    if now < CLOCK_FLOOR:
        return Check("clock", "fail", f"the clock says {now:%Y-%m-%d}, which is in the past; "
                     "TLS to providers and channels will fail", fix)
    if synchronized is True:
        return Check("clock", "ok", f"synchronised ({now:%Y-%m-%d %H:%M} UTC)")
    if synchronized is False:
        return Check("clock", "fail", "the clock is not NTP-synchronised", fix)
    return Check("clock", "warn", "cannot tell whether the clock is synchronised "
                 f"(no timedatectl answer); it says {now:%Y-%m-%d %H:%M} UTC", fix)
