"""The agent: from a ChannelMessage to a reply (commands, history, prompt, tool loop).

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.agent.commands import COMMAND_MENU
    from edge.agent.dispatch import Dispatcher
    from edge.agent.hooks import Cancel, Hook, HookRunner
    from edge.agent.pipeline import Agent, AgentSettings
    from edge.agent.preflight import ChannelAccess, Preflight
    from edge.agent.sessions import ResetPolicy, SessionStore

__all__ = ["Agent", "AgentSettings", "COMMAND_MENU", "Cancel", "ChannelAccess", "Dispatcher",
           "Hook", "HookRunner", "Preflight", "ResetPolicy", "SessionStore"]

_HOMES = {
    "commands": ("COMMAND_MENU",),
    "dispatch": ("Dispatcher",),
    "hooks": ("Cancel", "Hook", "HookRunner"),
    "pipeline": ("Agent", "AgentSettings"),
    "preflight": ("ChannelAccess", "Preflight"),
    "sessions": ("ResetPolicy", "SessionStore"),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
