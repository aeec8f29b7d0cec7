"""``edge-cli run``: the agent in the foreground."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from edge.core.exc import UsageError

if TYPE_CHECKING:
    from edge.runtime import Runtime


def config_only(common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The common options without ``--json``: ``run`` talks in the terminal, so its help does not
    offer what it would refuse."""
    parent = argparse.ArgumentParser(add_help=False)
    for action in common._actions:  # argparse's own parents= copies actions the same way
        if "--config" in action.option_strings:
            parent._add_action(action)
    return parent


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "run", parents=[config_only(common)], help="start the agent in the foreground",
        description="Start the agent in the foreground: boards, channels, control socket. Stops on "
                    "SIGTERM, Ctrl-C, SIGHUP (a dropped SSH session) or SIGQUIT, with every pin "
                    "at its safe level; any other signal that would end it (SIGUSR1, SIGALRM...) "
                    "stops it the same way, with exit code 128 + the signal's number. With "
                    "piped input and no network channel it answers each line and stops at end "
                    "of input; with a network channel (Telegram, Signal) "
                    "configured it keeps running after the input ends, until a signal. In a "
                    "terminal, log lines go to the log file and only warnings to the screen.")
    # not offered, but still understood: `run --json` hears why not (exit 2), not just "unknown"
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS)
    parser.add_argument("--simulate", action="store_true",
                        help="every board and sensor simulated (simulate = true): try a config "
                             "written for the real plant on any machine")
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help="in a terminal, show every log line (info) on stderr too, other "
                          "packages' requests included")
    loudness.add_argument("-q", "--quiet", action="store_true",
                          help="show errors only on stderr (the log file keeps everything)")
    parser.set_defaults(handler=run_agent)


def stream_level(args: argparse.Namespace, interactive: bool) -> str | None:
    """What reaches stderr: in a terminal warnings (the chat stays readable), else all; -v/-q."""
    if args.quiet:
        return "error"
    if args.verbose:
        return None
    return "warning" if interactive else None


def run_agent(args: argparse.Namespace) -> int:
    import asyncio
    import gc

    gc.disable()  # until the agent is ready: see run_collecting_once_ready
    from edge.config.loader import load_config
    from edge.core.logsetup import configure_from
    from edge.runtime import Runtime

    if args.json:
        raise UsageError("run talks in the terminal, not in JSON; use `edge-cli status --json` "
                         "for the running agent, or the control socket from scripts")
    loaded = load_config(args.config)
    if args.simulate:
        from edge.config.simulation import simulated_loaded

        loaded = simulated_loaded(loaded)
    loaded.prepare_dirs()  # an unwritable state or log directory: exit 2, not a traceback
    configure_from(loaded, stream_level=stream_level(args, sys.stdin.isatty()),
                   verbose=args.verbose)
    runtime = Runtime(loaded, resident=True)
    asyncio.run(run_collecting_once_ready(runtime))
    if runtime.stop_reason == "SIGINT":  # Ctrl-C: a word on screen, once the outputs went safe
        print(f"edge-agent: stopped; {runtime.hardware.claims.safe_state_words()}", file=sys.stderr)
    return runtime.exit_code


async def run_collecting_once_ready(runtime: Runtime) -> None:
    """The agent, with Python's cycle collector off until it is ready.

    Starting builds hundreds of thousands of objects (modules, the config's and the tools'
    pydantic models) that live as long as the agent; every full collection while they are
    being made walks all of them again: about 30 ms of a one-shot turn's 330. Once ready they
    are frozen (``gc.freeze``: later collections skip them, so the pauses while the agent works
    are shorter too) and the collector runs as usual. What starting left as cyclic garbage stays
    with them (measured: 0.3 MB of idle RSS)."""
    import asyncio
    import gc

    async def collect_once_ready() -> None:
        await runtime.ready.wait()
        gc.freeze()
        gc.enable()
        if (code_cache := sys.modules.get("edge.core.code_cache")) is not None:
            code_cache.settle()  # edge-cli's, if it keeps code; in the loop, where it is used

    collector = asyncio.create_task(collect_once_ready(), name="gc-once-ready")
    try:
        await runtime.run()
    finally:
        collector.cancel()
        gc.enable()
