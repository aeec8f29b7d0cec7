"""One turn of the message path, top-down. Hooks, preflight, commands, debounce and interruption
happen before this, in :mod:`edge.agent.dispatch`.

0. a request the local intents understand ("turn the pump on", "is the fan on?") is answered
   without a model, through the tools' one door (:mod:`edge.agent.intents`);
1. rate limit per sender; the daily token budget (spent: the turn is refused, the model is not
   called; otherwise every model call of the turn is reserved before it is made and counted
   however it ends, and a call the budget refuses mid-turn ends the turn with what it has,
   :mod:`edge.agent.budget`, :mod:`edge.agent.metering`);
2. open the session (resets: /new, daily hour, idle timeout) and add the user turn;
3. history hygiene: merge same-role turns, strip stale tool results, cap 50, trim 400,000 chars;
4. context window guard and pruning to the history share;
5. memory context for the sender (and group);
6. system prompt from sections (the compact profile's for a small local model,
   :mod:`edge.agent.compact`); a question about state is offered no tool that switches;
7. tool-call loop under the timeout budget (300 s x min(iterations, 4));
8. on context overflow: compaction, then one retry;
9. sanitise the reply and persist user and assistant turns (timeouts and failures persist a
   ``[Task timed out]`` / ``[Task failed]`` turn; a cancelled turn persists nothing);
10. the receipt: what the turn actuated or was refused, as the hardware recorded it (and a plain
   note when the reply claims a switch that no pin made), :mod:`edge.agent.receipts`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from edge.agent.preflight import Preflight
from edge.agent.receipts import ReceiptBook, with_receipt
from edge.agent.sessions import Session, SessionStore
from edge.channels.base import ChannelMessage
from edge.config.model import AgentConfig, MemoryConfig
from edge.core.messages import ChatMessage, ToolSpec
from edge.core.storage import StorageHealth, in_words
from edge.hardware import Hardware
from edge.memory.base import Memory
from edge.safe_mode import SafeMode
from edge.security.web_sessions import WebSessions
from edge.tools.base import Tool, spec_of

if TYPE_CHECKING:  # the provider stack loads only when a model is configured
    from edge.agent.budget import TokenBudget
    from edge.agent.intent_turn import IntentRunner
    from edge.agent.intents import Vocabulary
    from edge.agent.loop import TextSink
    from edge.ops.result import OpTarget
    from edge.providers.base import Provider
    from edge.providers.switch import ModelSwitch

log = logging.getLogger(__name__)

STILL_WORKING = ("Switching pins and their safety timers still work; an admin is told, and "
                 "/status shows it.")

NO_PROVIDER_REPLY = (
    "No language model is configured, so I can only run direct commands (/help lists them). "
    "To chat, set [provider] base_url and model in the config (for Ollama: "
    "base_url = \"http://127.0.0.1:11434/v1\"), or EDGE_PROVIDER__BASE_URL and "
    "EDGE_PROVIDER__MODEL, then restart.")
RATE_LIMITED_REPLY = "You are sending messages faster than I may answer; try again in a minute."
PROMPT_EVENTS = 5
TIMED_OUT_TURN = "[Task timed out]"
FAILED_TURN = "[Task failed]"


_AGENT, _MEMORY = AgentConfig(), MemoryConfig()


@dataclass
class AgentSettings:
    """What the pipeline needs from ``[agent]`` (defaults: the config model's, written once)."""

    max_tool_iterations: int = _AGENT.max_tool_iterations
    tool_result_max_chars: int = _AGENT.tool_result_max_chars
    message_timeout_seconds: float = _AGENT.message_timeout_seconds
    timeout_scale_cap: int = _AGENT.timeout_scale_cap
    context_window_tokens: int = _AGENT.context_window_tokens
    history_share: float = _AGENT.history_share
    instructions: str = _AGENT.instructions
    workspace: Path | None = None
    min_relevance: float = _MEMORY.min_relevance
    """Recalled memories scoring under this stay out of the prompt."""
    autosave_min_chars: int | None = _MEMORY.autosave_min_chars
    """User messages at least this long are kept as Conversation memories; None: no autosave."""
    receipts: bool = _AGENT.receipts
    """End replies to turns that touched a pin with the agent's receipt (``[agent] receipts``)."""
    local_intents: bool = _AGENT.local_intents
    """Answer the common requests without a model (``[agent] local_intents``)."""

    @classmethod
    def from_config(cls, agent: AgentConfig, memory: MemoryConfig, workspace: Path) -> AgentSettings:
        return cls(max_tool_iterations=agent.max_tool_iterations,
                   tool_result_max_chars=agent.tool_result_max_chars,
                   message_timeout_seconds=agent.message_timeout_seconds,
                   timeout_scale_cap=agent.timeout_scale_cap,
                   context_window_tokens=agent.context_window_tokens,
                   history_share=agent.history_share, instructions=agent.instructions,
                   workspace=workspace, min_relevance=memory.min_relevance,
                   autosave_min_chars=memory.autosave_min_chars if memory.autosave else None,
                   receipts=agent.receipts, local_intents=agent.local_intents)

    @property
    def timeout_budget(self) -> float:
        """Message timeout x min(max iterations, scale cap)."""
        return self.message_timeout_seconds * min(self.max_tool_iterations, self.timeout_scale_cap)


@dataclass
class Agent:
    tools: list[Tool]
    hardware: Hardware
    provider: ModelSwitch | None
    sessions: SessionStore
    status_text: Callable[[], Awaitable[str]]
    settings: AgentSettings = field(default_factory=AgentSettings)
    preflight: Preflight = field(default_factory=Preflight)
    memory: Memory | None = None
    channel_capabilities: dict[str, str] = field(default_factory=dict)
    admins: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Channel -> its admins (the runtime's table, which the approval gate holds too)."""
    safe_mode: SafeMode = field(default_factory=SafeMode)
    """After a crash loop: model turns are refused, commands still run, ``/resume`` leaves it."""
    operations: OpTarget | None = None
    """What the catalog's own handlers act on in chat (``/sim``): the runtime, once started."""
    budget: TokenBudget | None = None
    """The daily token budget (``[provider] daily_token_budget``); None: no cap."""
    receipts_by_channel: Mapping[str, bool] = field(default_factory=dict)
    """Channels whose ``receipts`` differs from ``[agent] receipts``."""
    web_codes: WebSessions | None = None
    """The web page's sessions (``[web] listen``), for an admin's ``/web``; None: no page."""
    receipts: ReceiptBook = field(default_factory=ReceiptBook, init=False)
    """The open turns' actuations, told by the hardware (registered at construction)."""
    failed_turns: int = field(default=0, init=False)
    provider_failure: tuple[float, str] | None = field(default=None, init=False)
    """(when, why) the model last failed to answer, until it answers again: status shows it."""
    """Turns the model could not answer (timeout, provider failure): a piped run exits 1."""
    storage: StorageHealth = field(default_factory=StorageHealth)
    """Told when the disk refuses to save a turn (the runtime's, shared with the audit trail)."""
    sensors: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Sensor -> quantity -> unit: the names local intents understand besides the pins'."""

    def __post_init__(self) -> None:
        self.hardware.add_recorder(self.receipts)

    @functools.cached_property
    def intents(self) -> tuple[Vocabulary, IntentRunner]:
        """The names local intents understand and what runs them (built at the first turn)."""
        from edge.agent.intent_turn import IntentRunner, vocabulary

        return (vocabulary(self.hardware, self.sensors),
                IntentRunner({t.name: t for t in self.tools}))

    async def _local_intent(self, msg: ChannelMessage) -> str | None:
        """The reply of a request understood without a model, or None (the model's turn)."""
        words, runner = self.intents
        intent = words.match(msg.content)
        if intent is None or not runner.can_run(intent):
            return None
        reply = await runner.run(intent, msg.requester)
        session = await self.sessions.open(msg.session_key, msg.channel,
                                           "group" if msg.is_group else "direct")
        return await self._keep(session, [ChatMessage.user(msg.content),
                                          ChatMessage.assistant(reply)], msg, reply)

    @functools.cached_property
    def specs(self) -> list[ToolSpec]:
        """The tools' specs, built for the first model turn (an agent that only idles or runs
        commands never generates the JSON schemas); the tools are fixed for the agent's life."""
        return [spec_of(t) for t in self.tools]

    async def command(self, msg: ChannelMessage, parsed: tuple[str, list[str]] | None = None
                      ) -> str | None:
        """The reply to a runtime or hardware command, or None when ``msg`` is not one;
        ``parsed``: its words as the dispatcher read them already (read once)."""
        from edge.agent.commands import CommandContext, run_command  # on use: idle memory

        ctx = CommandContext({t.name: t for t in self.tools}, self.status_text, msg.requester,
                             reset_session=lambda: self.sessions.reset_session(msg.session_key),
                             provider=self.provider,
                             admins=self.admins, safe_mode=self.safe_mode,
                             web_codes=self.web_codes,
                             target=self.operations)
        return await run_command(msg.content, ctx, parsed)

    def _provider_failed(self, reason: str) -> None:
        if self.provider_failure is None:  # since the first failure of a run
            self.provider_failure = (time.time(), reason)
        else:
            self.provider_failure = (self.provider_failure[0], reason)

    async def respond(self, msg: ChannelMessage, on_text: TextSink | None = None) -> str:
        """The model's reply to one (possibly debounced) message; ``on_text`` receives the
        reply so far while it streams (a channel's draft). It ends with the turn's receipt
        unless the channel has receipts off."""
        try:
            if not self.receipts_by_channel.get(msg.channel, self.settings.receipts):
                return await self._respond(msg, on_text)
            with self.receipts.turn(msg.requester.why) as done:
                reply = await self._respond(msg, on_text)
            return with_receipt(reply, done)
        except Exception as exc:  # a disk that refuses writes is said in words, not raised
            state = self.storage.failed(exc, self.sessions.directory)
            if state is None:
                raise
            return (f"I could not answer: {in_words(state)}, so this conversation cannot be "
                    f"saved. {STILL_WORKING}")

    async def _keep(self, session: Session, turns: list[ChatMessage], msg: ChannelMessage,
                    reply: str) -> str:
        """Save the turn (and the message as a memory); ``reply`` with a note when the disk
        refuses it."""
        try:
            await self.sessions.append(session, turns)
            await self._autosave(msg)
        except Exception as exc:
            state = self.storage.failed(exc, self.sessions.directory)
            if state is None:
                raise
            return f"{reply}\n\n(I could not save this: {in_words(state)}. {STILL_WORKING})"
        self.storage.recovered(self.sessions.directory)
        return reply

    async def _respond(self, msg: ChannelMessage, on_text: TextSink | None) -> str:
        refusal = self.safe_mode.refusal()
        if refusal is not None:  # a crash loop: the model is not asked
            return refusal
        if not self.preflight.within_rate(msg):
            return RATE_LIMITED_REPLY
        if self.settings.local_intents:
            reply = await self._local_intent(msg)
            if reply is not None:
                return reply
        if self.provider is None:
            return NO_PROVIDER_REPLY
        # the turn's steps load with the first turn: an idle agent does not hold them in memory
        from edge.agent.budget import BudgetSpent
        from edge.agent.context import evaluate_guard
        from edge.agent.metering import MeteredProvider
        from edge.agent.sanitize import sanitize_response
        from edge.providers.base import ProviderError

        provider: Provider = self.provider
        if self.budget is not None:
            spent = self.budget.refusal(msg.caller)
            if spent is not None:
                return spent
            provider = MeteredProvider(provider, self.budget, msg.caller)
        guard = evaluate_guard(self.settings.context_window_tokens,
                               compact=self.provider.compact_profile)
        if guard.should_block:
            return (f"The model's context window ({guard.tokens} tokens) is below the "
                    f"{guard.minimum:,} minimum; set [agent] context_window_tokens to the "
                    "model's real window.")
        session = await self.sessions.open(msg.session_key, msg.channel,
                                           "group" if msg.is_group else "direct")
        user_turn = ChatMessage.user(msg.content)
        try:
            async with asyncio.timeout(self.settings.timeout_budget):
                reply = await self._run_with_compaction(provider, msg, session, user_turn,
                                                        on_text)
        except TimeoutError:
            self.failed_turns += 1
            self._provider_failed(f"no answer within {self.settings.timeout_budget:g} s")
            await self.sessions.append(session, [user_turn, ChatMessage.assistant(TIMED_OUT_TURN)])
            return (f"The request timed out after {self.settings.timeout_budget:g} s. "
                    "Try something simpler, or /new to start afresh.")
        except ProviderError as exc:
            self.failed_turns += 1
            self._provider_failed(str(exc))
            log.error("provider_failed by=%s error=%s", msg.caller, exc)
            await self.sessions.append(session, [user_turn, ChatMessage.assistant(FAILED_TURN)])
            return f"The language model could not answer: {exc}"
        except BudgetSpent as spent:  # refused outside the tool loop (compaction): nothing kept
            return str(spent)
        self.provider_failure = None
        reply = sanitize_response(reply) or "(no reply)"
        return await self._keep(session, [user_turn, ChatMessage.assistant(reply)], msg, reply)

    async def _autosave(self, msg: ChannelMessage) -> None:
        """Keep the user's message as a Conversation memory, in its own scope."""
        if self.memory is None or self.settings.autosave_min_chars is None:
            return
        from edge.memory.conversation import autosave_user_message

        scope = msg.conversation_key if msg.is_group else msg.caller
        await autosave_user_message(self.memory, msg.content, msg.caller,
                                    min_chars=self.settings.autosave_min_chars, session_id=scope)

    async def _run_with_compaction(self, provider: Provider, msg: ChannelMessage,
                                   session: Session, user_turn: ChatMessage,
                                   on_text: TextSink | None) -> str:
        from edge.agent.context import compact, is_context_overflow
        from edge.agent.history import prepare_history
        from edge.providers.base import ProviderError

        try:
            return await self._model_turn(provider, msg, session, user_turn, on_text)
        except ProviderError as exc:
            if not is_context_overflow(exc, provider):
                raise
            log.warning("context_overflow session=%s; compacting", session.entry.session_id)
        summary, kept = await compact(provider, prepare_history(session.turns + [user_turn]),
                                      session.entry.summary)
        await self.sessions.replace(session, kept[:-1], summary)  # the last is the current turn
        return await self._model_turn(provider, msg, session, user_turn, on_text)

    async def _model_turn(self, provider: Provider, msg: ChannelMessage, session: Session,
                          user_turn: ChatMessage, on_text: TextSink | None) -> str:
        from edge.agent.compact import compact_turn, spec_tokens
        from edge.agent.context import estimate_tokens, prune_to_share
        from edge.agent.history import prepare_history
        from edge.agent.intent_turn import reading_tools
        from edge.agent.intents import is_state_question
        from edge.agent.loop import run_tool_loop
        from edge.agent.memory_context import build_memory_context
        from edge.agent.prompt import PromptContext, build_system_prompt

        reading_only = is_state_question(msg.content)  # restraint: a question moves nothing
        prompt = PromptContext(
            model=provider.model, instructions=self.settings.instructions,
            workspace=self.settings.workspace, channel=msg.channel, reply_target=msg.reply_target,
            sender=msg.sender, channel_capabilities=self.channel_capabilities.get(msg.channel, ""),
            summary=session.entry.summary, memory=await build_memory_context(
                self.memory, msg, self.settings.min_relevance))
        events = self.hardware.events(last=PROMPT_EVENTS)
        if self.provider is not None and self.provider.compact_profile:
            system, tools, specs = compact_turn(
                self.tools, self.intents[1], self.hardware.pin_list(), self.sensors, prompt,
                events, reading_only=reading_only)
        else:
            tools, specs = self.tools, self.specs
            if reading_only:
                tools = reading_tools(self.tools)
                specs = [spec for spec in self.specs if spec.name in {t.name for t in tools}]
            system = [ChatMessage.system(build_system_prompt(
                specs, self.hardware.status(), self.hardware.pin_list(), prompt, events))]
        window = self.settings.context_window_tokens - spec_tokens(specs)
        history = prepare_history(session.turns + [user_turn])
        history, dropped = prune_to_share(history, window, self.settings.history_share)
        if dropped:
            log.info("history_pruned session=%s dropped_turns=%d kept_tokens=%d",
                     session.entry.session_id, dropped, estimate_tokens(history))
        log.info("model_turn by=%s tools=%d compact=%s", msg.caller, len(tools),
                 len(system) > 1)
        return await run_tool_loop(provider, [*system, *history], tools,
                                   msg.requester.asking_model(),
                                   self.settings.max_tool_iterations,
                                   self.settings.tool_result_max_chars, specs, on_text)
