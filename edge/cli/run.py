"""``edge-cli run``: the agent in the foreground."""

from __future__ import annotations


def register(sub, common) -> None:
    parser = sub.add_parser("run", parents=[common], help="start the agent in the foreground",
                            description="Start the agent in the foreground: boards, channels, "
                                        "control socket. Stops on SIGTERM/Ctrl-C (pins go to their "
                                        "safe levels) or at end of piped input.")
    parser.set_defaults(handler=run_agent)


def run_agent(args) -> int:
    import asyncio

    from edge.config.loader import load_config
    from edge.logsetup import configure_from
    from edge.runtime import Runtime

    loaded = load_config(args.config)
    configure_from(loaded)
    runtime = Runtime(loaded, resident=True)
    asyncio.run(runtime.run())
    return 0
