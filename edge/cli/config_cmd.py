"""``edge-cli config init|check|show``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from edge.cli.output import emit
from edge.config.edit import CONFIG_MODE, example_text
from edge.config.locate import user_config_path
from edge.control.ops import OpResult
from edge.core.exc import EdgeError, UsageError
from edge.core.files import write_atomically


def flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, object]]:
    rows: list[tuple[str, object]] = []
    for key, value in data.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and value:
            rows.extend(flatten(value, name))
        else:
            rows.append((name, value))
    return rows


def init(args: argparse.Namespace) -> int:
    text = example_text()
    if args.path == "-":  # the example itself is the output; with --json, in data.text
        if args.json:
            return emit(OpResult(True, "", {"path": "-", "text": text}), True)
        sys.stdout.write(text)
        return 0
    path = Path(args.path).expanduser() if args.path else user_config_path()
    if path.exists() and not args.force:
        raise UsageError(f"{path} already exists; edit it, or pass --force to overwrite it")
    try:
        write_atomically(path, text, CONFIG_MODE)
    except OSError as exc:
        raise EdgeError(f"cannot write {path}: {exc.strerror or exc}; choose another path, or "
                        "run it as a user who may write there") from None
    scenario = _write_starter_scenario(path, args.force)
    tried = f", and {scenario}: try it with `edge-cli test {scenario}`" if scenario else ""
    return emit(OpResult(True, f"wrote {path}; edit it, then run `edge-cli config check`{tried}",
                         {"path": str(path), "scenario": str(scenario) if scenario else None}),
                args.json)


def _write_starter_scenario(config: Path, force: bool) -> Path | None:
    """A first scenario beside the config (:func:`edge.scenario.files.starter`); an existing
    one is kept (unless ``--force``), and one that cannot be written is left out."""
    from edge.scenario.files import STARTER_NAME, starter

    path = config.parent / STARTER_NAME
    if path.exists() and not force:
        return None
    try:
        write_atomically(path, starter(config.name), 0o644)
    except OSError:
        return None
    return path


def check(args: argparse.Namespace) -> int:
    """Exit 0 when valid (warnings about risky settings, and rules or interlocks whose meaning
    changed, go to stderr), 2 when not, with every problem of every stage that could run
    (``data.problems``), and a secret in a file anyone may read as doctor words it
    (:mod:`edge.doctor.config_verdict`); each rule and interlock on an input is explained in
    wiring terms (``data.wiring``)."""
    from edge.core.exc import EXIT_USAGE
    from edge.doctor.config_verdict import judge_config
    from edge.doctor.exposure import exposure_warnings

    verdict = judge_config(args.config)
    if not verdict.ok:
        lines = [verdict.problems_text()] if verdict.problems else []
        if verdict.exposed_secret:
            lines.append("; ".join(verdict.exposed_secret))
        return emit(OpResult(False, "\n".join(lines), {"config": verdict.origin,
                                                       "problems": verdict.lines()}, EXIT_USAGE),
                    args.json)
    assert verdict.loaded is not None and verdict.automation is not None  # ok: both there
    loaded, automation = verdict.loaded, verdict.automation
    warnings = exposure_warnings(loaded.config) + automation.meaning_changes()
    notes = automation.wiring_notes()
    if loaded.config.mqtt.exposure:  # doctor says it in its mqtt check
        from edge.config.mqtt import EXPOSURE_FIX

        warnings.append(f"mqtt: {loaded.config.mqtt.exposure}; {EXPOSURE_FIX}")
    if not args.json:
        for warning in warnings:
            print(f"edge-cli: warning: {warning}", file=sys.stderr)
    message = f"{loaded.source}: OK" + (f" ({len(warnings)} warning(s))" if warnings else "")
    if notes:
        message += "\nwhat the inputs' rules and interlocks mean on the wire (check them against " \
                   "the wiring before power is on):\n" + "\n".join(f"  {note}" for note in notes)
    return emit(OpResult(True, message, {"config": loaded.source, "warnings": warnings,
                                         "wiring": notes}), args.json)


def show(args: argparse.Namespace) -> int:
    from edge.config.loader import load_config

    loaded = load_config(args.config)
    data = loaded.config.model_dump(mode="json")
    if args.json:
        return emit(OpResult(True, f"effective configuration from {loaded.source}",
                             {"config": data, "source": loaded.source}), True)
    print(f"# effective configuration from {loaded.source}; secrets redacted")
    for key, value in flatten(data):
        print(f"{key} = {json.dumps(value)}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    config = sub.add_parser("config", parents=[common], help="write, check or show the config")
    csub = config.add_subparsers(dest="action", metavar="ACTION", required=True)
    init_p = csub.add_parser("init", parents=[common], help="write a commented example config")
    init_p.add_argument("path", nargs="?", help="where to write it ('-' for stdout; default "
                                                "~/.config/edge-agent/config.toml)")
    init_p.add_argument("--force", action="store_true", help="overwrite an existing file")
    init_p.set_defaults(handler=init)
    csub.add_parser("check", parents=[common], help="validate the config (exit 2 if wrong)"
                    ).set_defaults(handler=check)
    csub.add_parser("show", parents=[common], help="print the effective config, secrets redacted"
                    ).set_defaults(handler=show)
