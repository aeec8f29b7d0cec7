"""The agent process: assembles hardware, tools, provider, channels and the control socket from
config, runs them, and on a stopping signal (:mod:`edge.core.stopsignals`) or end of input leaves every
pin at its safe level."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from edge import __version__
from edge.agent.dispatch import Dispatcher
from edge.agent.hooks import Hook, HookRunner
from edge.agent.pipeline import Agent, AgentSettings
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sessions import ResetPolicy, SessionStore
from edge.automation.assembly import Automation
from edge.automation.clock import Clock
from edge.channels.base import Channel, ChannelMessage
from edge.channels.supervisor import ListenerSupervisor
from edge.config.loader import LoadedConfig
from edge.control.server import ControlServer
from edge.core.logsetup import RecentEvents
from edge.core.ownership import LOCK_NAME, AgentLock
from edge.core.redaction import secret_values
from edge.core.requester import Requester
from edge.core.sdnotify import ServiceNotifier
from edge.core.stopsignals import STOPPING, exit_code, signal_name
from edge.core.supervision import SupervisedTask, close_all, down_tasks
from edge.hardware import build_hardware
from edge.memory.base import EmbeddingProvider, Memory
from edge.security.approvals import ApprovalGate
from edge.tools.automation import automation_tools
from edge.tools.gpio import hardware_tools

if TYPE_CHECKING:
    from edge.mqtt.bridge import MqttBridge
    from edge.providers.switch import ModelSwitch

STOP_SIGNALS = STOPPING
"""Each stops the agent the same way: outputs to their safe levels, then exit (0 when asked to
stop: SIGTERM, SIGINT, SIGHUP, SIGQUIT; 128 + N after an unexpected signal N such as SIGUSR1).
Which signals, and why the others are ignored or cannot be caught: :mod:`edge.core.stopsignals`."""

log = logging.getLogger(__name__)

PRELOAD_JOIN_SECONDS = 120.0


def stdin_attached(stream: TextIO) -> bool:
    """True for a terminal, pipe, file or socket; False for /dev/null (systemd's default)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return True  # an in-memory stream given by a caller
    if os.isatty(fd):
        return True
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


class Runtime:
    """``resident=True`` is the daemon (``edge-cli run``); False is a one-shot CLI command."""

    def __init__(self, loaded: LoadedConfig, *, resident: bool, pin_factory=None,
                 stdin: TextIO | None = None, stdout: TextIO | None = None,
                 hooks: list[Hook] | None = None, hold_seconds: float | None = None,
                 clock: Clock | None = None):
        self.loaded = loaded
        self.config = loaded.config
        self.resident = resident
        self.channels: dict[str, Channel] = {}
        cfg = self.config.channels
        self.approvals = ApprovalGate.from_config(
            self.config.security, {"telegram": frozenset(map(str, cfg.telegram.admins)),
                                   "signal": frozenset(cfg.signal.admins)}, self.channels)
        self.hardware = build_hardware(self.config, resident=resident, pin_factory=pin_factory,
                                       hold_seconds=hold_seconds, state_dir=loaded.state_dir,
                                       approvals=self.approvals)
        self.automation = Automation(self.config, self.hardware, pin_factory=pin_factory,
                                     state_dir=loaded.state_dir, clock=clock)
        self.tools = {t.name: t for t in [*hardware_tools(self.hardware),
                                          *automation_tools(self.automation, self.approvals)]}
        self.provider: ModelSwitch | None = None
        self.supervisors: dict[str, ListenerSupervisor] = {}
        self._tasks: list[SupervisedTask] = []
        """The dispatcher and memory upkeep (the other parts own theirs)."""
        self.sessions: SessionStore | None = None
        self.memory: Memory | None = None
        self._preload_thread: threading.Thread | None = None
        self.access: dict[str, ChannelAccess] = {}
        self.hooks = HookRunner(hooks)
        self.started_at = time.time()
        self._stdin, self._stdout = stdin or sys.stdin, stdout or sys.stdout
        self._stop = asyncio.Event()
        self.ready = asyncio.Event()
        """Set once every part has started (when systemd is told READY=1)."""
        self._stop_reason = ""
        self.recent_events = RecentEvents(secrets=secret_values(self.config))
        self.service = ServiceNotifier()
        self.agent: Agent | None = None
        self.mqtt: MqttBridge | None = None
        self.exit_code = 0
        """What ``edge-cli run`` exits with: 1 when a piped run could not get an answer."""

    async def status(self) -> dict[str, Any]:
        from edge.status import memory_store_summary, redact_status  # on the first status: idle memory

        channels = [await sup.health() for sup in self.supervisors.values()]
        provider = self.config.provider
        return redact_status({
            "daemon": {"running": self.resident, "version": __version__,
                       "pid": os.getpid() if self.resident else None,
                       "uptime_seconds": round(time.time() - self.started_at, 1)},
            "config": self.loaded.source,
            "boards": [s.as_dict() for s in self.hardware.status()],
            "board_events": self.hardware.events(),
            "channels": channels,
            "tasks": [task.row() for task in self.supervised_tasks()],
            "provider": {"configured": provider.configured, **self._active_endpoint(),
                         **self._provider_health()},
            "memory": memory_store_summary(self.loaded.state_dir),
            **self.automation.status(),
            "mqtt": self.mqtt.status() if self.mqtt else {"enabled": self.config.mqtt.enabled,
                                                          "connected": False},
            "recent_errors": self.recent_events.snapshot(),
        }, secret_values(self.config))

    def _active_endpoint(self) -> dict[str, Any]:
        """The model and endpoint in use now (after ``models use``), else the configured ones."""
        provider = self.config.provider
        if self.provider is not None:
            for row in self.provider.list_models():
                if row.active:
                    return {"model": row.model, "base_url": row.base_url, "endpoint": row.name}
        return {"model": provider.model, "base_url": provider.base_url, "endpoint": None}

    def _provider_health(self) -> dict[str, Any]:
        """``failing_since`` and ``last_error`` while the model is failing to answer."""
        failure = self.agent.provider_failure if self.agent is not None else None
        if failure is None:
            return {"failing_since": None, "last_error": None}
        when, why = failure
        return {"failing_since": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(when)),
                "last_error": why}

    async def status_text(self, full: bool = True) -> str:
        from edge.status import format_status

        return format_status(await self.status(), full=full)

    def request_stop(self, reason: str = "") -> None:
        if not self._stop.is_set():
            self._stop_reason = reason or "requested"
            log.info("stopping reason=%s", self._stop_reason)
            self._stop.set()

    def _stop_on_signal(self, signum: int) -> None:
        """Stop through the safe state; a signal nobody sends on purpose (SIGUSR1...) is logged
        as a warning and makes the exit code 128 + its number (see :mod:`edge.core.stopsignals`)."""
        name, code = signal_name(signum), exit_code(signum)
        if code and not self._stop.is_set():
            log.warning("unexpected_signal signal=%s action=stop exit_code=%d", name, code)
            self.exit_code = code
        self.request_stop(name)

    def _build_channels(self) -> None:
        cfg = self.config.channels
        for name, section in (("cli", cfg.cli), ("telegram", cfg.telegram),
                              ("signal", cfg.signal)):
            allowed, mention, rate = section.access()
            self.access[name] = ChannelAccess(set(map(str, allowed)), mention, rate)
        gate = self.approvals
        if cfg.cli.enabled and stdin_attached(self._stdin):
            from edge.channels.cli import CliChannel

            self.channels["cli"] = CliChannel(self._stdin, self._stdout)
        if cfg.telegram.enabled:
            from edge.agent.commands import COMMAND_MENU
            from edge.channels.outbox import Outbox
            from edge.channels.telegram import TelegramChannel
            from edge.channels.telegram_api import TelegramAPI

            tg = cfg.telegram
            self.channels["telegram"] = TelegramChannel(
                TelegramAPI(tg.bot_token.get_secret_value() if tg.bot_token else "", tg.api_base),
                self.access["telegram"].allowed, self.loaded.state_dir,
                poll_timeout=tg.poll_timeout_seconds, require_mention=tg.groups.require_mention,
                approvals=gate, pair=self._pair, commands=COMMAND_MENU,
                draft_interval=tg.draft_interval_seconds, stream_drafts=tg.stream_drafts,
                outbox=Outbox.from_config(self.config.agent, self.loaded.state_dir))
        if cfg.signal.enabled:
            from edge.channels.signal import SignalChannel

            self.channels["signal"] = SignalChannel(
                cfg.signal.http_url, cfg.signal.account, self.access["signal"].allowed,
                group_ids=cfg.signal.group_ids, approvals=gate, pair=self._pair)
        if self.mqtt is not None and self.mqtt.chat_inbox is not None:
            from edge.mqtt.chat import MqttChatChannel

            self.access["mqtt"] = ChannelAccess({"*"}, False, self.config.mqtt.chat_rate_limit_per_minute)
            self.channels["mqtt"] = MqttChatChannel(self.mqtt)  # the broker's ACL says who

    async def _pair(self, channel: str, sender: str, code: str) -> bool:
        """Redeem a pairing code: allow ``sender`` now and record it in the config file."""
        from edge.channels.pairing import PairingCodes
        from edge.config.edit import add_to_list, writable_config_path

        if not PairingCodes(self.loaded.state_dir / "pairing.json").redeem(channel, code):
            log.warning("pairing_refused channel=%s sender=%s", channel, sender)
            return False
        self.access[channel].allowed.add(sender)
        key = "allowed_numbers" if channel == "signal" else "allowed_users"
        try:
            path = writable_config_path(self.loaded.path)
            add_to_list(path, ("channels", channel, key), sender)
            log.info("paired channel=%s sender=%s config=%s", channel, sender, path)
        except OSError as exc:
            log.error("pairing_not_saved channel=%s sender=%s error=%r (allowed until restart)",
                      channel, sender, exc)
        return True

    async def run(self) -> None:
        """Run until a signal, or until end of input when the CLI is the only channel."""
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self._stop_on_signal, sig)
        # the lock first: a second agent must be refused before it touches any board
        lock = AgentLock.acquire(self.loaded.control_socket.parent / LOCK_NAME)
        control = ControlServer(self.loaded.control_socket, self)
        listeners: list[asyncio.Task] = []
        self.recent_events.attach()
        try:
            await self.hardware.start()
            await self._start_mqtt()
            await control.start()
            if self.config.provider.configured:  # the provider modules load only for a model
                from edge.providers.factory import create_provider

                self.provider = create_provider(self.config.provider)
            self._tasks.extend(await self._start_memory())
            self._build_channels()
            dispatcher = self._build_dispatcher()
            self._tasks.append(SupervisedTask("dispatcher", dispatcher.run).start())
            for name, channel in self.channels.items():
                supervisor = self.supervisors[name] = ListenerSupervisor(
                    channel, on_change=self._refresh_service_status)
                listeners.append(asyncio.create_task(
                    self._listen(supervisor, dispatcher), name=f"listen-{name}"))
            await self.automation.start(self.channels, self.approvals.admins,
                                        self._down_components, prompts=self)
            self._log_ready()
            self.service.ready(self._service_status())
            self.ready.set()
            self.hardware.subscribe(self._refresh_service_status)
            await self._stop.wait()
        finally:
            self.service.stopping(self._stop_reason or "error")
            for task in listeners:
                task.cancel()
            await asyncio.gather(*listeners, close_all(self._tasks), return_exceptions=True)
            if self.mqtt is not None:
                await self.mqtt.close()  # offline, and no more commands, before the safe state
            await self.automation.aclose()
            await self.hardware.shutdown()
            if self.sessions is not None:
                await self.sessions.close()
            if self._preload_thread is not None and self._preload_thread.is_alive():
                # onnxruntime aborts the process if it is torn down mid-load
                log.info("waiting for the embedding model to finish loading before exit")
                await asyncio.to_thread(self._preload_thread.join, PRELOAD_JOIN_SECONDS)
            if self.memory is not None:
                await self.memory.close()
            await control.close()
            if self.provider:
                await self.provider.aclose()
            for channel in self.channels.values():
                await channel.aclose()
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
            lock.release()
            if self.agent is not None and self.agent.failed_turns and self._piped_input():
                self.exit_code = 1  # a script piping into the agent must see that it got no answer
            log.info("stopped")
            self.service.close()
            self.recent_events.detach()

    async def _start_mqtt(self) -> None:
        """The broker bridge when ``[mqtt] url`` is set (it connects and retries by itself)."""
        if self.config.mqtt.enabled:
            from edge.mqtt.bridge import MqttBridge  # aiomqtt only for agents that use it

            self.mqtt = MqttBridge(self.config.mqtt, self.hardware, sensors=self.automation.sensors,
                                   state_dir=self.loaded.state_dir)
            await self.mqtt.start()

    async def _start_memory(self) -> list[SupervisedTask]:
        """Open the memory store, add its tools, start hygiene and (optionally) the model
        preload in a thread that start-up does not wait for. A piped one-shot run skips the
        preload: it would only race the exit. Either way no reply waits for the model: until it is
        loaded, recall uses keywords and stores are embedded once it is (``wait_for_model``)."""
        from edge.memory import build_memory, hygiene_loop, snapshot_path
        from edge.tools.memory import configured_admins, memory_tools

        cfg = self.config.memory
        if cfg.backend == "none":
            return []
        memory = self.memory = await build_memory(cfg, self.loaded.state_dir)
        if not await memory.health_check():  # opens the store now: status shows it at once
            log.warning("memory_unavailable backend=%s state_dir=%s", cfg.backend, self.loaded.state_dir)
        for tool in memory_tools(memory, configured_admins(self.config.channels)):
            self.tools[tool.name] = tool
        embedder = memory.model_to_preload()
        if embedder is not None:
            piped = self._piped_input()
            background = cfg.preload and not piped
            if background or piped:
                memory.wait_for_model = False  # no reply waits for the model to load
            if background:
                self._preload_thread = threading.Thread(
                    target=self._preload, args=(embedder, asyncio.get_running_loop()),
                    name="embedding-preload", daemon=True)
                self._preload_thread.start()
        upkeep = partial(hygiene_loop, memory, cfg, snapshot_path(self.loaded.state_dir))
        return [SupervisedTask("memory-hygiene", upkeep).start()]

    def _piped_input(self) -> bool:
        return (self.config.channels.cli.enabled and stdin_attached(self._stdin)
                and not self._stdin.isatty())

    def _preload(self, embedder: EmbeddingProvider, loop: asyncio.AbstractEventLoop) -> None:
        try:
            embedder.load()
        except Exception as exc:  # recall falls back to keywords and says why
            log.error("embedding_preload_failed error=%s", exc)
            return
        if not loop.is_closed():
            asyncio.run_coroutine_threadsafe(self._embed_deferred(), loop)

    async def _embed_deferred(self) -> None:
        """Vectors for what was stored while the model was loading."""
        if self.memory is None:
            return
        try:
            count = await self.memory.reindex(only_stale=True)
        except Exception as exc:  # hygiene tries again on its next round
            log.warning("memory_deferred_embedding_failed error=%s", exc)
            return
        if count:
            log.info("memory_deferred_embedded entries=%d", count)

    def _build_dispatcher(self) -> Dispatcher:
        cfg = self.config.agent
        workspace = Path(cfg.workspace).expanduser() if cfg.workspace else self.loaded.state_dir / "workspace"
        settings = AgentSettings.from_config(cfg, self.config.memory, workspace)
        self.sessions = SessionStore(self.loaded.state_dir / "sessions",
                                     ResetPolicy(self.config.sessions.daily_reset_hour,
                                                 self.config.sessions.idle_timeout_minutes))
        agent = self.agent = Agent(list(self.tools.values()), self.hardware, self.provider, self.sessions,
                      self.status_text, settings, Preflight(self.access), self.memory,
                      channel_capabilities={name: ch.capabilities
                                            for name, ch in self.channels.items()},
                      admins=self.approvals.admins)
        return Dispatcher(agent, self.channels, hooks=self.hooks,
                          interrupt_on_new_message=cfg.interrupt_on_new_message,
                          debounce_seconds=cfg.debounce_ms / 1000,
                          debounce_max_wait=cfg.debounce_max_wait_ms / 1000)

    async def _listen(self, supervisor: ListenerSupervisor, dispatcher: Dispatcher) -> None:
        await supervisor.run(dispatcher.bus)
        if len(self.channels) == 1:
            await dispatcher.drain()
            self.request_stop(f"end of input on {supervisor.channel.name}")

    def _down_components(self) -> dict[str, str]:
        """Boards, channels, the broker and supervised tasks that are down now, and why (the
        heartbeat's view)."""
        down = {f"board {b.name}": b.detail or "not connected"
                for b in self.hardware.status() if not b.connected}
        down.update({f"channel {name}": sup.reason or "not listening"
                     for name, sup in self.supervisors.items() if sup.down})
        if self.mqtt is not None and not self.mqtt.connected:
            down["the MQTT broker"] = self.mqtt.last_error or "not connected"
        down.update(down_tasks(self.supervised_tasks()))
        return down

    def supervised_tasks(self) -> list[SupervisedTask]:
        """Every long-lived task of the agent but the channel listeners (status shows those as
        its channels): the board supervisor, the MQTT bridge, the dispatcher, memory upkeep, the
        rules, the scheduler, the heartbeat and each sensor's polling."""
        bridge = self.mqtt.supervised_tasks() if self.mqtt is not None else []
        return [*self.hardware.supervised_tasks(), *bridge, *self._tasks,
                *self.automation.supervised_tasks()]

    async def prompt(self, text: str, requester: Requester) -> str:
        """A rule's or schedule's prompt: one agent turn in the requester's own session
        (``rule:NAME``); its tool calls go through the policy as that caller."""
        if self.agent is None:
            return "the agent is not running"
        message = ChannelMessage(requester.sender, "", text, requester.channel)
        return await self.agent.respond(message)

    def _service_status(self) -> str:
        """One line for ``systemctl status``: boards connected, channels (down ones marked)."""
        boards = self.hardware.status()
        up = sum(1 for b in boards if b.connected)
        channels = [name if sup.down_since is None else f"{name}(down)"
                    for name, sup in self.supervisors.items()] or list(self.channels)
        return (f"ready: {up}/{len(boards)} boards connected, "
                f"channels {','.join(channels) or 'none'}")

    def _refresh_service_status(self, event=None) -> None:
        if event is None or event.kind in ("down", "up"):
            self.service.status(self._service_status())

    def _log_ready(self) -> None:
        for board in self.hardware.status():
            log.info("board name=%s kind=%s simulated=%s detail=%r", board.name, board.kind,
                     board.simulated, board.detail)
            if board.simulated:
                print(f"edge-agent: board {board.name} is SIMULATED: {board.detail}",
                      file=sys.stderr)
        provider = self.config.provider
        log.info("ready version=%s config=%r channels=%s provider=%s startup_ms=%d", __version__,
                 self.loaded.source, ",".join(self.channels) or "none",
                 provider.model if provider.configured else "none",
                 (time.time() - self.started_at) * 1000)
