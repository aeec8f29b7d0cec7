"""The agent's parts, built from config and wired once: the admins and the approval gate, the
hardware, automation and tools; then, as :class:`~edge.runtime.Runtime` starts them, the broker
bridge, the model, memory, the channels and the agent's dispatcher.

Runtime-wide ideas live here and are handed to whoever needs them: the admin table (from each
channel's spec, :func:`edge.channels.registry.admin_table`) and the one approval gate go to the pin
policy, the channels (which record answers in it), the agent and the automation tools; the
channels' allowlists are shared with the agent's preflight and grow when someone pairs.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from edge.agent.dispatch import Dispatcher
from edge.agent.hooks import Hook, HookRunner
from edge.agent.pipeline import Agent, AgentSettings
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sessions import ResetPolicy, SessionStore
from edge.audit import AUDIT_FILE, AuditTrail
from edge.automation.assembly import Automation
from edge.automation.clock import Clock, SystemClock, sleeper
from edge.cameras.service import CameraService
from edge.channels.base import Channel
from edge.channels.cli import stdin_attached
from edge.channels.registry import CHANNELS, admin_table, channel_spec
from edge.channels.spec import ChannelContext
from edge.charts.service import SensorCharts
from edge.config.loader import LoadedConfig
from edge.core.storage import StorageHealth
from edge.core.supervision import SupervisedTask
from edge.hardware import build_hardware
from edge.mcp.server_approvals import approvers_with_mcp
from edge.memory.base import Memory
from edge.ops.catalog import build_tools
from edge.readings.recorder import ReadingRecorder
from edge.readings.store import ReadingStore
from edge.security.approval_store import APPROVALS_FILE, ApprovalStore
from edge.security.approvals import ApprovalGate
from edge.tools.camera import CameraSnapshotTool
from edge.tools.charts import SensorChartTool

if TYPE_CHECKING:
    from edge.agent.budget import TokenBudget
    from edge.channels.voice_queue import VoiceNoteQueue
    from edge.control.ops import OpTarget
    from edge.mcp.client_servers import McpServers
    from edge.mcp.server_http import McpHttpServer
    from edge.memory.preload import ModelPreload
    from edge.mqtt.bridge import MqttBridge
    from edge.providers.switch import ModelSwitch
    from edge.web.server import WebServer

log = logging.getLogger(__name__)


def _command_menu() -> list[tuple[str, str]]:
    from edge.agent.commands import COMMAND_MENU  # on use: only a channel with a menu loads it

    return COMMAND_MENU


class AgentAssembly:
    """``resident=True`` is the daemon (``edge-cli run``); False is a one-shot CLI command."""

    def __init__(self, loaded: LoadedConfig, *, resident: bool, pin_factory: Any = None,
                 stdin: TextIO | None = None, stdout: TextIO | None = None,
                 hooks: list[Hook] | None = None, hold_seconds: float | None = None,
                 clock: Clock | None = None):
        self.loaded = loaded
        self.config = loaded.config
        self.resident = resident
        self._stdin, self._stdout = stdin or sys.stdin, stdout or sys.stdout
        self._people()
        self._pins(pin_factory, hold_seconds, clock)
        self._automation(pin_factory, clock)
        self._tools()
        self.hooks = HookRunner(hooks)
        self._started_later()

    def _people(self) -> None:
        """The channels (:meth:`build_channels`), their allowlists, the admins, the gate."""
        self.channels: dict[str, Channel] = {}
        self.access: dict[str, ChannelAccess] = {}
        self.admins = admin_table(self.config)
        trusted = {f"token:{name}": frozenset(targets)
                   for name, targets in self.config.mcp.trust.items()}
        self.approvals = ApprovalGate.from_config(
            self.config.security, self.admins, approvers_with_mcp(self.admins, self.channels),
            trusted=trusted, store=ApprovalStore(self.loaded.state_dir / APPROVALS_FILE))

    def _pins(self, pin_factory: Any, hold_seconds: float | None, clock: Clock | None) -> None:
        """The one door to the pins (on the agent's clock), and the audit trail that records
        what passes it."""
        loaded, clock = self.loaded, clock or SystemClock()
        self.hardware = build_hardware(self.config, resident=self.resident, pin_factory=pin_factory,
                                       hold_seconds=hold_seconds, state_dir=loaded.state_dir,
                                       approvals=self.approvals,
                                       sleep=sleeper(clock), monotonic=clock.monotonic)
        self.storage = StorageHealth()
        """The state directory's health as the stores find it (full, read-only, ok)."""
        self.audit = AuditTrail(loaded.state_dir / AUDIT_FILE, self.config.audit.keep_days,
                                self.config.audit.max_megabytes, self.storage)
        self.hardware.add_recorder(self.audit)

    def _automation(self, pin_factory: Any, clock: Clock | None) -> None:
        """Sensors, rules and schedules, the sensor history, and the cameras."""
        state_dir = self.loaded.state_dir
        self.automation = Automation(self.config, self.hardware, pin_factory=pin_factory,
                                     state_dir=state_dir, clock=clock)
        self.recorder = ReadingRecorder(ReadingStore.in_state_dir(state_dir),
                                        self.automation.sensors, health=self.storage)
        """The sensor history: every reading kept (started by :meth:`start_recorder`)."""
        self.cameras = CameraService(self.config.cameras, self.config.agent.outbox_dir(state_dir))
        """``[cameras.NAME]``: pictures into the outbox (Pillow loads with the first)."""

    def _tools(self) -> None:
        """The catalog's tools (:mod:`edge.ops.catalog`), charts (matplotlib on first use), photos."""
        self.tools = build_tools(self)
        charts = SensorCharts(self.config, self.loaded.state_dir,
                              self.config.agent.outbox_dir(self.loaded.state_dir),
                              store=self.recorder.store,
                              before_read=self.recorder.flush_for_reading)
        self.tools[SensorChartTool.name] = SensorChartTool(charts)
        if self.cameras.names:
            self.tools[CameraSnapshotTool.name] = CameraSnapshotTool(self.cameras)

    def _started_later(self) -> None:
        """The parts :class:`~edge.runtime.Runtime` starts, none until then."""
        self.provider: ModelSwitch | None = None
        self.mqtt: MqttBridge | None = None
        self.mcp_servers: McpServers | None = None
        self.mcp_http: McpHttpServer | None = None  # [mcp] listen: its connections and refusals
        self.web: WebServer | None = None  # [web] listen: its sessions, streams and refusals
        self.sessions: SessionStore | None = None
        self.memory: Memory | None = None
        self.agent: Agent | None = None
        self._preload: ModelPreload | None = None
        self._voice_notes: VoiceNoteQueue | None = None
        self._tasks: list[SupervisedTask] = []
        """The dispatcher and memory upkeep (the other parts own theirs)."""

    # the parts, in the order Runtime.run starts them --------------------------------------------

    async def start_mqtt(self) -> None:
        """The broker connection when ``[mqtt] url`` is set (it retries by itself), and on it the
        Home Assistant publisher (first: it sweeps stale discovery) and the fleet, which this
        agent's ``node`` boards ask through."""
        if not self.config.mqtt.enabled:
            return
        from edge.fleet import keys, link, node_board  # aiomqtt only for agents that use it
        from edge.mqtt.bridge import MqttBridge
        from edge.mqtt.connection import MqttConnection

        cfg, state_dir = self.config.mqtt, self.loaded.state_dir
        connection = MqttConnection(cfg, state_dir)
        nodes = [b for b in self.hardware.boards.values() if isinstance(b, node_board.NodeBoard)]
        fleet = link.FleetLink(cfg, keys.FleetKeys.of(cfg.fleet_keys, state_dir), nodes)
        for board in nodes:
            board.attach(fleet)
        self.mqtt = MqttBridge(cfg, self.hardware, sensors=self.automation.sensors,
                               cameras=self.cameras, connection=connection, fleet=fleet)
        connection.carry(fleet, intercept=fleet.intercept)
        await self.mqtt.start()

    def start_mcp(self, target: OpTarget) -> None:
        """The MCP server over streamable HTTP when ``[mcp] listen`` is set, asking ``target``
        (the runtime) as the control socket does; the SDK loads only then."""
        if self.config.mcp.enabled:
            from edge.mcp.server_http import McpHttpServer

            self.mcp_http = McpHttpServer(self.config.mcp, target, self.approvals)
            self._tasks.append(SupervisedTask("mcp-http", self.mcp_http.serve).start())

    def start_web(self, target: OpTarget) -> None:
        """The web page when ``[web] listen`` is set (:mod:`edge.web`): uvicorn loads only then."""
        if self.config.web.enabled:
            from edge.web.server import WebServer

            self.web = WebServer(self.config.web, target, self.hardware, self.loaded.state_dir,
                                 self.approvals)
            self._tasks.append(SupervisedTask("web", self.web.serve).start())

    def start_provider(self) -> None:
        if self.config.provider.configured:  # the provider modules load only for a model
            from edge.providers.factory import create_provider

            self.provider = create_provider(self.config.provider)

    async def start_memory(self) -> None:
        """Open the memory store, add its tools and start hygiene; :meth:`start_preload` loads
        the model once the channels show whether the agent will keep running."""
        from edge.memory import build_memory, hygiene_loop, snapshot_path
        from edge.tools.memory import configured_admins, memory_tools

        cfg = self.config.memory
        if cfg.backend == "none":
            return
        memory = self.memory = await build_memory(cfg, self.loaded.state_dir)
        if not await memory.health_check():  # opens the store now: status shows it at once
            log.warning("memory_unavailable backend=%s state_dir=%s", cfg.backend, self.loaded.state_dir)
        for tool in memory_tools(memory, configured_admins(self.admins)):
            self.tools[tool.name] = tool
        upkeep = partial(hygiene_loop, memory, cfg, snapshot_path(self.loaded.state_dir))
        self._tasks.append(SupervisedTask("memory-hygiene", upkeep).start())

    async def start_mcp_servers(self) -> None:
        """The allowed tools of ``[[mcp.servers]]`` join the model's (the SDK loads only when
        some are configured); the remote ones that act on the world pass the approval gate and
        the rate limit, and are recorded where the pins' actuations are."""
        servers = self.config.mcp.servers
        if not servers:
            return
        from edge.mcp.client_servers import McpServers
        from edge.mcp.sandbox import Places

        self.mcp_servers = McpServers(servers, self.approvals,
                                      self.config.security.max_actuations_per_minute,
                                      self.hardware.record, taken=self.tools,
                                      places=Places.of(self.loaded))
        await self.mcp_servers.start()
        for tool in self.mcp_servers.tools:
            self.tools[tool.name] = tool

    def start_preload(self) -> None:
        """Load the embedding model (``[memory] preload``) in a thread that start-up does not
        wait for, whenever the agent keeps running (:meth:`keeps_running`): a daemon, a terminal,
        or a piped run beside a network channel. A piped one-shot run skips it: it would only
        race the exit. Either way no reply waits for the model: until it is loaded, recall uses
        keywords, and what was stored meanwhile is embedded once it is (``wait_for_model``)."""
        embedder = self.memory.model_to_preload() if self.memory is not None else None
        if self.memory is None or embedder is None:
            return
        background = self.config.memory.preload and self.keeps_running()
        if background or self.piped_input():
            self.memory.wait_for_model = False  # no reply waits for the model to load
        if background:
            from edge.memory.preload import ModelPreload

            self._preload = ModelPreload(self.memory, embedder)
            self._preload.start()

    def build_channels(self) -> None:
        """Every registered channel its section enables, in registration order; each channel's
        allowlist is shared with the preflight (pairing adds to it)."""
        for spec in CHANNELS.values():
            section = spec.section(self.config)
            allowed, mention, rate = section.access()
            self.access[spec.name] = ChannelAccess(set(map(str, allowed)), mention, rate)
            if not section.enabled:
                continue
            context = ChannelContext(
                self.config, self.loaded.state_dir, self.access[spec.name].allowed,
                approvals=self.approvals, pair=self.pair, commands=_command_menu,
                stdin=self._stdin, stdout=self._stdout, mqtt=self.mqtt,
                web=self.web.chat if self.web is not None else None)
            channel = spec.build(section, context)
            if channel is not None:
                channel.hear_voice_notes(self.voice_notes())
                self.channels[spec.name] = channel

    def voice_notes(self) -> VoiceNoteQueue:
        """The agent's one queue of voice notes, shared by every channel (made at the first
        call: it clears the files a killed agent left in ``<state>/voice``)."""
        if self._voice_notes is None:
            from edge.channels.voice_queue import VoiceNoteQueue
            from edge.transcription import Transcriber

            cfg = self.config.transcription
            self._voice_notes = VoiceNoteQueue(
                self.loaded.state_dir / "voice",
                Transcriber.from_config(cfg) if cfg.enabled else None,
                max_transcript_chars=cfg.max_transcript_chars)
        return self._voice_notes

    async def pair(self, channel: str, sender: str, code: str) -> bool:
        """Redeem a pairing code: allow ``sender`` now and record it in the config file, under
        the allowlist key the channel's spec names."""
        from edge.channels.pairing import PairingCodes
        from edge.config.edit import add_to_list, writable_config_path

        key = channel_spec(channel).pairs_into
        if key is None or not PairingCodes(self.loaded.state_dir / "pairing.json").redeem(channel, code):
            log.warning("pairing_refused channel=%s sender=%s", channel, sender)
            return False
        self.access[channel].allowed.add(sender)
        try:
            path = writable_config_path(self.loaded.path)
            add_to_list(path, ("channels", channel, key), sender)
            log.info("paired channel=%s sender=%s config=%s", channel, sender, path)
        except OSError as exc:
            log.error("pairing_not_saved channel=%s sender=%s error=%r (allowed until restart)",
                      channel, sender, exc)
        return True

    def build_dispatcher(self, status_text: Callable[..., Awaitable[str]]) -> Dispatcher:
        """The agent (``status_text``: the runtime's status, for ``/status``) and the dispatcher
        that feeds it the channels' messages."""
        cfg = self.config.agent
        workspace = Path(cfg.workspace).expanduser() if cfg.workspace else self.loaded.state_dir / "workspace"
        settings = AgentSettings.from_config(cfg, self.config.memory, workspace)
        self.sessions = SessionStore(self.loaded.state_dir / "sessions",
                                     ResetPolicy(self.config.sessions.daily_reset_hour,
                                                 self.config.sessions.idle_timeout_minutes,
                                                 self.config.sessions.ended_transcript_days))
        agent = self.agent = Agent(
            list(self.tools.values()), self.hardware, self.provider, self.sessions,
            status_text, settings, Preflight(self.access), self.memory,
            channel_capabilities={name: ch.capabilities for name, ch in self.channels.items()},
            admins=self.admins, budget=self._token_budget(),
            receipts_by_channel=self._receipts_by_channel(), storage=self.storage,
            web_codes=self.web.sessions if self.web is not None else None,
            sensors=self.automation.sensors.describe())
        return Dispatcher(agent, self.channels, hooks=self.hooks,
                          interrupt_on_new_message=cfg.interrupt_on_new_message,
                          debounce_seconds=cfg.debounce_ms / 1000,
                          debounce_max_wait=cfg.debounce_max_wait_ms / 1000)

    def _receipts_by_channel(self) -> dict[str, bool]:
        """``[channels.NAME] receipts`` where it is set (otherwise ``[agent] receipts``)."""
        overrides = {spec.name: spec.receipts(spec.section(self.config))
                     for spec in CHANNELS.values() if spec.receipts is not None}
        return {name: on for name, on in overrides.items() if on is not None}

    def _token_budget(self) -> TokenBudget | None:
        """``[provider] daily_token_budget`` / ``per_user_daily_tokens``; admins hear of it."""
        if self.provider is None:
            return None
        from edge.agent.budget import budget_from_config

        cfg = self.config.provider
        return budget_from_config(cfg.daily_token_budget, cfg.per_user_daily_tokens,
                                  self.loaded.state_dir,
                                  partial(self.automation.notifier.notify, ("admins",)),
                                  reply_allowance=cfg.max_tokens)

    def piped_input(self) -> bool:
        """The terminal channel reads a pipe or a file: a script, answered in order, then exit."""
        return (self.config.channels.cli.enabled and stdin_attached(self._stdin)
                and not self._stdin.isatty())

    def keeps_running(self) -> bool:
        """Whether the agent runs until a signal once its channels are built: all but a piped
        run whose only channel is the terminal, which stops at end of input."""
        return not (self.piped_input() and list(self.channels) == ["cli"])

    # closing, in the order Runtime.run unwinds them ---------------------------------------------

    async def close_mqtt(self) -> None:
        if self.mqtt is not None:
            await self.mqtt.close()

    async def close_mcp_servers(self) -> None:
        if self.mcp_servers is not None:
            await self.mcp_servers.aclose()

    def start_recorder(self) -> None:
        """Keep every reading in the sensor history (a daemon; one-shot commands read it)."""
        if self.automation.sensors.sensors:
            self.recorder.start()

    async def close_readings(self) -> None:
        """Write the readings still buffered and close the history file."""
        await self.recorder.aclose()

    async def close_audit(self) -> None:
        await asyncio.to_thread(self.audit.close)

    async def close_sessions(self) -> None:
        if self.sessions is not None:
            await self.sessions.close()

    async def join_preload(self) -> None:
        if self._preload is not None:
            await self._preload.join()

    async def close_memory(self) -> None:
        if self.memory is not None:
            await self.memory.close()

    async def close_provider(self) -> None:
        if self.agent is not None and self.agent.budget is not None:
            await self.agent.budget.flush()  # the ledger of turns the stop cancelled
        if self.provider:
            await self.provider.aclose()

    async def close_channels(self) -> None:
        for channel in self.channels.values():
            await channel.aclose()
