"""Whose memory is whose: the one door through which a person stores, recalls and forgets.

Every memory has a scope, its ``session_id``: a person (``telegram:42``, what they stored or
said), that person's part of a group chat (the pipeline's group autosave scope), or none: a
*shared* memory, stored by an admin, the local operator or ``edge-cli memory``. A person sees
their own memories and the shared ones, never another person's; only an admin (or the local
operator) stores or forgets shared ones.

Keys are per person: a private key is stored as ``<caller>/<key>`` so that two people may both
keep ``wifi`` and nobody overwrites (or learns of) another's entry; they see it as ``wifi``.

>>> asker = Requester("telegram", "42", "42")
>>> stored_key(asker, "wifi"), shown_key(asker, "telegram:42/wifi"), shown_key(asker, "pump")
('telegram:42/wifi', 'wifi', 'pump')
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection
from dataclasses import replace

from edge.core.exc import EdgeError
from edge.core.requester import Requester
from edge.memory.base import Category, Memory, MemoryEntry

IsAdmin = Callable[[Requester], bool]
"""Whether a requester may store and forget shared memories."""

LOCAL_OPERATOR_CHANNELS = frozenset({"cli", "local"})
"""The terminal running the agent and the control socket: the person who owns the machine."""

Scopes = Collection[str | None]
"""Session ids whose memories a caller may see; ``None`` stands for the shared ones."""


def local_operator_only(requester: Requester) -> bool:
    """The default admin check: only the local operator (no chat user is an admin)."""
    return requester.channel in LOCAL_OPERATOR_CHANNELS


class SharedMemoryRefused(EdgeError):
    """A person who is not an admin asked to store or forget a shared memory."""


def own_scope(requester: Requester) -> str:
    return requester.caller


def stored_key(requester: Requester, key: str) -> str:
    """The key a private memory is stored under."""
    return f"{own_scope(requester)}/{key}"


def shown_key(requester: Requester, key: str) -> str:
    """The key as its owner wrote it (the stored key without the owner's prefix)."""
    prefix = f"{own_scope(requester)}/"
    return key[len(prefix):] if key.startswith(prefix) else key


def visible_scopes(requester: Requester, more: Scopes = ()) -> frozenset[str | None]:
    """What the requester may see: their own memories, the shared ones (``None``), and ``more``
    of their own (their part of a group chat)."""
    return frozenset({None, own_scope(requester), *more})


class PersonalMemory:
    """One Memory, as each person may use it. ``is_admin`` decides who may touch shared ones.

    >>> import asyncio, tempfile
    >>> from edge.memory.markdown import MarkdownMemory
    >>> mine = PersonalMemory(MarkdownMemory(tempfile.mkdtemp()))
    >>> alice, bob = Requester("telegram", "42"), Requester("telegram", "43")
    >>> asyncio.run(mine.store(alice, "wifi", "the password is hunter2", Category.CORE))
    >>> [e.key for e in asyncio.run(mine.recall(alice, "password"))], asyncio.run(mine.recall(bob, "password"))
    (['wifi'], [])
    """

    def __init__(self, memory: Memory, is_admin: IsAdmin = local_operator_only):
        self.memory = memory
        self.is_admin = is_admin

    async def recall(self, requester: Requester, query: str, limit: int = 5,
                     more: Scopes = ()) -> builtins.list[MemoryEntry]:
        """The requester's and the shared memories most relevant to ``query``, keys as shown
        to the requester."""
        scopes = visible_scopes(requester, more)
        found = await self.memory.recall(query, limit, scopes=scopes)
        return [replace(e, key=shown_key(requester, e.key)) for e in found if e.session_id in scopes]

    async def store(self, requester: Requester, key: str, content: str, category: Category,
                    shared: bool = False) -> None:
        """Store a private memory (or, for an admin, a shared one) without ever replacing
        another person's entry; raises SharedMemoryRefused, or MemoryFailure for a key taken
        by a shared memory."""
        if shared and not self.is_admin(requester):
            raise SharedMemoryRefused("only an admin (or the local operator) can store shared "
                                      "memories; stored nothing. Store it without shared.")
        scope = None if shared else own_scope(requester)
        target = key if shared else stored_key(requester, key)
        existing = await self.memory.get(target)
        if existing is not None and existing.session_id != scope:
            raise SharedMemoryRefused(f"the key '{key}' is in use by a shared memory; "
                                      "choose another key")
        await self.memory.store(target, content, category, scope)

    async def forget(self, requester: Requester, key: str, more: Scopes = ()) -> bool:
        """Delete the requester's memory ``key`` (or, for an admin, the shared one); False when
        the requester has none by that key, whether or not someone else has."""
        own = visible_scopes(requester, more) - {None}
        for candidate in (stored_key(requester, key), key):
            entry = await self.memory.get(candidate)
            if entry is None:
                continue
            if entry.session_id in own:
                return await self.memory.forget(candidate)
            if entry.session_id is None and candidate == key:
                if not self.is_admin(requester):
                    raise SharedMemoryRefused(f"'{key}' is a shared memory; only an admin (or the "
                                              "local operator) can forget it")
                return await self.memory.forget(candidate)
        return False
