"""``edge-cli test SCENARIO.toml [--config PATH] [--junit FILE]``: the agent of a config, on
simulated boards and sensors, in this process, with a fast clock, through a scenario's steps
(:mod:`edge.scenario`). Exit 0 when every step held, 1 when one did not (the report names it:
what was expected, what was found, the last events), 2 for a scenario or config that is wrong.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "test", parents=[common], help="run a scenario against a config, on simulated boards",
        description="Run the agent of a config on simulated boards and sensors, in process, with "
                    "a fast clock, through a scenario's steps; exit 0 when each held, 1 when one "
                    "did not, 2 for a wrong scenario.")
    parser.add_argument("scenario", help="the scenario file (TOML: [[steps]])")
    parser.add_argument("--junit", metavar="FILE", help="also write the outcome as JUnit XML")
    parser.set_defaults(handler=run_test)


def run_test(args: argparse.Namespace) -> int:
    import asyncio
    import time

    from edge.cli.output import emit
    from edge.ops.result import OpResult
    from edge.scenario.files import read_scenario, scenario_config
    from edge.scenario.report import words, write_junit
    from edge.scenario.runner import run_scenario

    path = Path(args.scenario)
    scenario = read_scenario(path)
    loaded = scenario_config(path, scenario, args.config)
    began = time.monotonic()
    results = asyncio.run(run_scenario(scenario, loaded))
    seconds = time.monotonic() - began
    if args.junit:
        write_junit(Path(args.junit), path.name, results, seconds)
    failed = any(r.status == "failed" for r in results)
    text = words(f"{path.name} on {loaded.source}, from "
                 f"{scenario.start.astimezone(scenario.zone):%Y-%m-%d %H:%M %Z}", results, seconds)
    data = {"steps": [vars(r) for r in results], "seconds": round(seconds, 3)}
    if args.json:
        return emit(OpResult(not failed, text, data), True)
    print(text)
    return 1 if failed else 0
