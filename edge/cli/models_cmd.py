"""``edge-cli models [use NAME]``: list the configured LLM endpoints and models, or switch the
running agent to another endpoint or model (through its control socket; no restart). With a
``[provider] daily_token_budget`` or ``per_user_daily_tokens`` the listing shows today's use, read
from the ledger the agent keeps (``<state>/token-usage.json``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from edge.cli.output import emit
from edge.config.locate import load_raw
from edge.control import client
from edge.control.ops import OpResult
from edge.core.exc import DaemonUnavailable, EdgeError
from edge.core.paths import socket_candidates
from edge.status_lines import tokens_line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    models = sub.add_parser("models", parents=[common],
                            help="list LLM endpoints and models, or switch the running agent")
    msub = models.add_subparsers(dest="action", metavar="ACTION")
    use = msub.add_parser("use", parents=[common],
                          help="switch the running agent to an endpoint (by name) or a model")
    use.add_argument("name", help="an endpoint name from `edge-cli models`, or a model name")
    models.set_defaults(handler=run)


def render(data: dict[str, Any]) -> str:
    rows = data.get("models") or []
    if not rows:
        return "no provider configured; set [provider] model and base_url (or preset)"
    lines = []
    for row in rows:
        mark = "*" if row.get("active") else " "
        extra = f"  fallback models: {', '.join(row['fallback_models'])}" if row[
            "fallback_models"] else ""
        lines.append(f"{mark} {row['name']:<12} {row['kind']:<9} {row['model']:<28} "
                     f"{row['base_url']}  ({row['role']}){extra}")
    for route in data.get("routes") or []:
        lines.append(f"  route hint:{route['hint']} -> {route['endpoint']} "
                     f"{route['model'] or '(its model)'}")
    if data.get("tokens"):
        lines.append(tokens_line(data["tokens"]))
    return "\n".join(lines)


def tokens_today(config_path: str | None) -> dict[str, Any] | None:
    """Today's use from the agent's token ledger; None without a budget (or a readable config)."""
    from edge.agent.budget import budget_from_config
    from edge.config.loader import load_config

    try:
        loaded = load_config(config_path)
    except EdgeError:
        return None
    cfg = loaded.config.provider
    budget = budget_from_config(cfg.daily_token_budget, cfg.per_user_daily_tokens,
                                loaded.state_dir)
    return budget.today() if budget is not None else None


def listing_from_config(config_path: str | None) -> OpResult:
    from edge.config.loader import load_config
    from edge.providers.factory import describe_models, describe_routes

    config = load_config(config_path).config.provider
    if not config.configured:
        return OpResult(False, "no provider is configured: set [provider] model (and base_url or "
                        "preset) in the config; `edge-cli config init` writes a commented example",
                        {"models": [], "routes": []}, exit_code=1)
    rows = describe_models(config)
    for index, row in enumerate(rows):
        row["active"] = index == 0
    return OpResult(True, "", {"models": rows, "routes": describe_routes(config)})


def run(args: argparse.Namespace) -> int:
    raw = load_raw(args.config)
    state_dir = (raw.data.get("paths") or {}).get("state_dir")
    paths = socket_candidates(state_dir if isinstance(state_dir, str) else None)
    op, op_args = ("models.select", {"name": args.name}) if args.action == "use" else ("models", {})
    try:
        result, via = OpResult.from_dict(client.request(paths, op, op_args)), "daemon"
    except DaemonUnavailable:
        if op == "models.select":
            result = OpResult(False, "no running agent to switch; start it with `edge-cli run`, "
                              "or change [provider] model in the config", exit_code=1)
            return emit(result, args.json, via="direct")
        result, via = listing_from_config(args.config), "config"
        if not args.json:
            print("edge-cli: no running agent; listing the configured models", file=sys.stderr)
    if result.ok and op == "models":
        result.data["tokens"] = tokens_today(args.config)
    return emit(result, args.json, via=via, render=render)
