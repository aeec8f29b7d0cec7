"""``edge-cli doctor [--json]``: config, adapters, groups, devices, boards, cameras, memory,
provider, channels, MCP servers, how the last run ended, disk, clock.

Every failed or warning check says how to fix it. Exit codes: 0 all checks passed, 1 a check
failed, 4 no check failed but some gave warnings (``--json``: ``ok`` is false then too, with the
summary as ``error`` and the checks in ``data``).
"""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edge.doctor import Check

MARKS = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("doctor", parents=[common], help="check the setup and say how to fix it",
                            description=__doc__)
    parser.add_argument("--user", metavar="NAME",
                        help="whose groups and device access to check (default: edge if that "
                             "user exists, else you)")
    parser.set_defaults(handler=run)


def service_user(explicit: str | None) -> str:
    import getpass
    import pwd

    if explicit:
        return explicit
    try:
        pwd.getpwnam("edge")
        return "edge"
    except KeyError:
        return getpass.getuser()


def run_checks(config_path: str | None, user: str) -> list[Check]:
    from edge.config.locate import load_raw
    from edge.core.exc import EdgeError
    from edge.core.paths import state_dir
    from edge.doctor import agent, cameras, host, mcp_servers, memory, mqtt, remote

    config_check, loaded = agent.check_config(config_path)
    checks = [config_check, agent.check_adapters()]
    if loaded is not None:  # what the checks log goes to the log file; the report says it all
        from edge.core.logsetup import configure_from

        # an unwritable log file: the disk check reports the state directory
        with contextlib.suppress(EdgeError, OSError):
            configure_from(loaded, stream=False)
    try:
        raw = load_raw(config_path).data
    except EdgeError:
        raw = {}
    configured_state = (raw.get("paths") or {}).get("state_dir")
    checks.append(host.check_groups(raw, user, agent.unit_installed()))
    checks.append(host.check_devices(raw, user))
    checks.append(host.check_pin_factory(raw))
    if loaded is not None:
        checks.append(agent.check_boards(loaded))
        if loaded.config.sensors:
            checks.append(agent.check_sensors(loaded))
        if (camera_check := cameras.check_cameras(loaded)) is not None:
            checks.append(camera_check)
    checks.append(memory.check_memory(loaded))
    checks.append(remote.check_provider(raw, agent.running_provider(loaded)))
    checks.extend(remote.check_channels(raw))
    checks.append(mqtt.check_mqtt(loaded))
    checks.append(mqtt.check_fleet(loaded))
    checks.extend(mcp_servers.check_mcp_servers(loaded))
    state = state_dir(configured_state if isinstance(configured_state, str) else None)
    checks.append(agent.check_last_end(state))
    checks.append(host.check_disk(state))
    checks.append(host.check_clock(synchronized=host.ntp_synchronized()))
    return checks


def render(checks: list[Check]) -> str:
    lines = []
    for check in checks:
        lines.append(f"[{MARKS[check.status]}] {check.name}: {check.detail}")
        if check.fix and check.status in ("fail", "warn"):
            lines.append(f"       fix: {check.fix}")
    failed = sum(c.status == "fail" for c in checks)
    warned = sum(c.status == "warn" for c in checks)
    if failed:
        lines.append(f"{failed} check(s) failed" + (f", {warned} warning(s)" if warned else ""))
    elif warned:
        lines.append(f"no check failed; {warned} warning(s)")
    else:
        lines.append("all checks passed")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from edge.core.exc import EXIT_FAILED, EXIT_WARNINGS
    from edge.doctor import worst

    checks = run_checks(args.config, service_user(args.user))
    overall = worst(checks)
    code = {"fail": EXIT_FAILED, "warn": EXIT_WARNINGS}.get(overall, 0)
    if args.json:
        from edge.cli.output import emit
        from edge.control.ops import OpResult

        summary = render(checks).rsplit("\n", 1)[-1]  # "all checks passed", "1 check(s) failed"
        return emit(OpResult(code == 0, summary, {"status": overall,
                                                  "checks": [c.as_dict() for c in checks]}, code),
                    True)
    print(render(checks))
    return code
