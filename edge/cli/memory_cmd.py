"""``edge-cli memory store|search|list|forget|stats|reindex``: the agent's long-term memory,
opened directly (SQLite in WAL mode lets the CLI and a running agent share the file; the agent
notices the CLI's writes through ``PRAGMA data_version``). ``--json`` prints the shape every
command does (``ok``, ``exit_code``, ``message`` or ``error``, ``data``): search and list put
their memories in ``data.entries``, stats its figures in ``data``.

Only the commands that embed (store, search, reindex) prepare the embedding model, saying so on
stderr the first time (a few seconds); list, forget and stats never touch it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from edge.core.exc import UsageError

if TYPE_CHECKING:
    from edge.config.loader import LoadedConfig
    from edge.control.ops import OpResult
    from edge.memory.base import Memory, MemoryEntry

PROGRESS_WIDTH = 30


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    memory = sub.add_parser("memory", parents=[common], help="store, search and tidy long-term memory")
    msub = memory.add_subparsers(dest="action", metavar="ACTION", required=True)
    store = msub.add_parser("store", parents=[common], help="remember TEXT under KEY (replaces KEY)")
    store.add_argument("key")
    store.add_argument("text")
    store.add_argument("--category", default="core",
                       help="core | daily | conversation | any custom name (default core)")
    search = msub.add_parser("search", parents=[common], help="recall the memories closest to QUERY")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=5, metavar="N", help="at most N results")
    listing = msub.add_parser("list", parents=[common], help="list memories, newest first")
    listing.add_argument("--category", help="only this category")
    forget = msub.add_parser("forget", parents=[common], help="delete the memory under KEY")
    forget.add_argument("key")
    msub.add_parser("stats", parents=[common], help="counts, model, cache and file size")
    msub.add_parser("reindex", parents=[common],
                    help="re-embed every memory (after changing the embedding model)")
    memory.set_defaults(handler=run)


def progress_bar(done: int, total: int) -> None:
    stream = sys.stderr  # looked up per call: the stream may be replaced after import
    filled = PROGRESS_WIDTH * done // max(total, 1)
    stream.write(f"\rreindex [{'#' * filled}{'.' * (PROGRESS_WIDTH - filled)}] {done}/{total}")
    if done >= total:
        stream.write("\n")
    stream.flush()


def _entry_line(entry: MemoryEntry) -> str:
    score = f"  [{entry.score:.2f}]" if entry.score is not None else ""
    return f"{entry.key} ({entry.category}){score}: {entry.content}"


async def act(args: argparse.Namespace, memory: Memory) -> OpResult:
    """The action's outcome, in the shape every command prints (``--json``: ``ok``,
    ``exit_code``, ``message`` or ``error``, ``data``)."""
    from edge.control.ops import OpResult
    from edge.memory.base import Category

    if args.action == "store":
        try:
            category = Category.parse(args.category)
        except ValueError as exc:
            raise UsageError(f"--category: {exc}") from None
        await memory.store(args.key, args.text, category)
        return OpResult(True, f"stored {args.key} ({category})",
                        {"key": args.key, "category": category.value})
    if args.action == "search":
        if args.limit < 1:
            raise UsageError("--limit must be at least 1")
        entries = await memory.recall(args.query, args.limit)
        found = [{"key": e.key, "content": e.content, "category": e.category.value,
                  "score": e.score} for e in entries]
        return OpResult(True, "\n".join(map(_entry_line, entries)) or "no matching memories",
                        {"entries": found})
    if args.action == "list":
        entries = await memory.list(Category.parse(args.category) if args.category else None)
        return OpResult(True, "\n".join(map(_entry_line, entries)) or "no memories",
                        {"entries": [e.as_dict() for e in entries]})
    if args.action == "forget":
        if await memory.forget(args.key):
            return OpResult(True, f"forgot {args.key}", {"key": args.key})
        return OpResult(False, f"no memory {args.key!r} was deleted (unknown key, or the "
                        f"{memory.name} backend is append-only)", {"key": args.key}, exit_code=1)
    if args.action == "stats":
        stats = await memory.stats()
        return OpResult(True, "\n".join(f"{k}: {v}" for k, v in stats.items()), stats)
    # a backend without vectors raises NothingToReindex, which says so (exit 2)
    count = await memory.reindex(progress=None if args.json else progress_bar)
    return OpResult(True, f"re-embedded {count} memories", {"reindexed": count})


def model_not_prepared(loaded: LoadedConfig) -> bool:
    """True when this command will make the embedding model's cached copy first (a pause)."""
    from edge.memory.embedders import MODEL_CACHE_DIR
    from edge.memory.model_file import has_quantized_copy

    memory = loaded.config.memory
    if memory.backend != "sqlite" or memory.embedder != "onnx" or not memory.quantize:
        return False
    return not has_quantized_copy(loaded.state_dir / MODEL_CACHE_DIR)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from edge.cli.output import emit
    from edge.config.loader import load_config
    from edge.memory.factory import build_memory

    loaded = load_config(args.config)
    if args.action in ("store", "search", "reindex") and model_not_prepared(loaded):
        print("edge-cli: preparing the embedding model for first use (it is re-quantised once "
              "into the state directory; a few seconds)...", file=sys.stderr, flush=True)

    async def once() -> OpResult:
        memory = await build_memory(loaded.config.memory, loaded.state_dir)
        try:
            return await act(args, memory)
        finally:
            await memory.close()

    return emit(asyncio.run(once()), args.json)
