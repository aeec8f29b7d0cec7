"""The agent process: runs the parts :mod:`edge.assembly` builds from config, in order, and on a
stopping signal (:mod:`edge.core.stopsignals`) or end of input stops them in the order
:meth:`Runtime.run` pushes them, which leaves every pin at its safe level."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from functools import partial
from typing import Any, TextIO

from edge import __version__
from edge.agent.dispatch import Dispatcher
from edge.agent.hooks import Hook
from edge.assembly import AgentAssembly
from edge.automation.clock import Clock
from edge.channels.base import ChannelMessage
from edge.channels.supervisor import ListenerSupervisor
from edge.config.loader import LoadedConfig
from edge.control.server import ControlServer
from edge.core.logsetup import RecentEvents
from edge.core.ownership import LOCK_NAME, AgentLock
from edge.core.redaction import secret_values
from edge.core.requester import Requester
from edge.core.sdnotify import ServiceNotifier
from edge.core.stopsignals import STOPPING, catch, exit_code, signal_name
from edge.core.supervision import SupervisedTask, close_all, down_tasks
from edge.core.workers import install_workers
from edge.safe_mode import WINDOW_SECONDS, RunLedger, SafeMode

STOP_SIGNALS = STOPPING
"""Each stops the agent the same way: outputs to their safe levels, then exit (0 when asked to
stop: SIGTERM, SIGINT, SIGHUP, SIGQUIT; 128 + N after an unexpected signal N such as SIGUSR1).
Which signals, and why the others are ignored or cannot be caught: :mod:`edge.core.stopsignals`."""

log = logging.getLogger(__name__)


class Runtime(AgentAssembly):
    """The assembled agent, run: ``resident=True`` is the daemon (``edge-cli run``); False is a
    one-shot CLI command."""

    def __init__(self, loaded: LoadedConfig, *, resident: bool, pin_factory: Any = None,
                 stdin: TextIO | None = None, stdout: TextIO | None = None,
                 hooks: list[Hook] | None = None, hold_seconds: float | None = None,
                 clock: Clock | None = None):
        super().__init__(loaded, resident=resident, pin_factory=pin_factory, stdin=stdin,
                         stdout=stdout, hooks=hooks, hold_seconds=hold_seconds, clock=clock)
        self.supervisors: dict[str, ListenerSupervisor] = {}
        self.started_at = time.time()
        self._stop = asyncio.Event()
        self.ready = asyncio.Event()
        """Set once every part has started (when systemd is told READY=1)."""
        self._stop_reason = ""
        self.recent_events = RecentEvents(secrets=secret_values(self.config))
        self.service = ServiceNotifier()
        self._listeners: list[asyncio.Task[None]] = []
        self.exit_code = 0
        """What ``edge-cli run`` exits with: 1 when a piped run could not get an answer."""
        self.safe_mode = SafeMode()
        """Inactive unless :meth:`run` finds a crash loop in the ledger of runs."""
        self.ledger: RunLedger | None = None
        """This run's record in the ledger of runs, once :meth:`run` began it."""

    async def status(self) -> dict[str, Any]:
        from edge.status import memory_store_summary, redact_status  # on the first status: idle memory

        channels = [await sup.health() for sup in self.supervisors.values()]
        provider = self.config.provider
        return redact_status({
            "daemon": {"running": self.resident, "version": __version__,
                       "pid": os.getpid() if self.resident else None,
                       "uptime_seconds": round(time.time() - self.started_at, 1),
                       "asyncio_tasks": len(asyncio.all_tasks())},
            "config": self.loaded.source,
            "boards": [s.as_dict() for s in self.hardware.status()],
            "board_events": self.hardware.events(),
            "channels": channels,
            "tasks": [task.row() for task in self.supervised_tasks()],
            "provider": {"configured": provider.configured, **self._active_endpoint(),
                         **self._provider_health(), "tokens": self._tokens_today()},
            "memory": memory_store_summary(self.loaded.state_dir),
            **self.automation.status(),
            "mqtt": self.mqtt.status() if self.mqtt else {"enabled": self.config.mqtt.enabled,
                                                          "connected": False},
            "mcp": self.mcp_servers.status() if self.mcp_servers else {"servers": []},
            "recent_errors": self.recent_events.snapshot(),
            "safe_mode": self.safe_mode.status(),
            "last_end": self._last_end(),
            "readings": self.recorder.status(),
            "storage": self.storage.status(),
            "cameras": self.cameras.status(),
        }, secret_values(self.config))

    def _last_end(self) -> dict[str, Any] | None:
        """How the previous run ended when not cleanly (:meth:`RunLedger.last_end`)."""
        end = (self.ledger or RunLedger.in_state_dir(self.loaded.state_dir)).last_end()
        return end.as_dict() if end is not None else None

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

    def _tokens_today(self) -> dict[str, Any] | None:
        """Today's use against ``[provider] daily_token_budget``; None without a budget."""
        budget = self.agent.budget if self.agent is not None else None
        return budget.today() if budget is not None else None

    async def status_text(self, full: bool = True) -> str:
        from edge.status import format_status

        return format_status(await self.status(), full=full)

    @property
    def stop_reason(self) -> str:
        """What stopped the agent (``SIGINT``, ``end of input``...); empty while it runs."""
        return self._stop_reason

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

    async def run(self) -> None:
        """Run until a signal, or until end of input when the CLI is the only channel.

        What stops is pushed on a stack before anything starts, and the stack unwinds from the
        last push to the first: the loops stop; the broker hears ``offline`` (and no more
        commands come) before the safe state; automation stops before the hardware drives every
        output to its safe level; then sessions, the embedding preload, memory, the control
        socket, the model and the channels close; the signals and the lock are let go last.

        The run is recorded in the state directory's ledger (:mod:`edge.safe_mode`): this exit
        path marks it clean; after a crash loop the start is in safe mode."""
        loop = asyncio.get_running_loop()
        install_workers(loop)  # every worker thread now, so the count never grows
        restore_signals = catch(loop, STOP_SIGNALS, self._stop_on_signal)
        # the lock first: a second agent must be refused before it touches any board
        lock = AgentLock.acquire(self.loaded.control_socket.parent / LOCK_NAME)
        ledger = self.ledger = RunLedger.in_state_dir(self.loaded.state_dir)
        self.safe_mode = SafeMode(ledger.begin(os.getpid()), ledger, self._resume_automation)
        try:
            await self._run_until_stopped(lock, restore_signals)
        except Exception as exc:  # the next start counts it, with this as its reason
            ledger.end(error=f"{type(exc).__name__}: {exc}")
            raise
        # a clean stop; an unexpected signal (SIGUSR1...) stopped it safely but counts as a kill
        ledger.end(error=f"stopped by {self._stop_reason}" if self.exit_code > 128 else None)

    async def _run_until_stopped(self, lock: AgentLock, restore_signals: Callable[[], None]) -> None:
        control = ControlServer(self.loaded.control_socket, self)
        self.recent_events.attach()
        async with AsyncExitStack() as stack:
            stack.callback(self.recent_events.detach)
            stack.callback(self.service.close)
            stack.callback(log.info, "stopped")
            stack.callback(self._note_unanswered_input)
            stack.callback(lock.release)
            stack.callback(restore_signals)
            stack.push_async_callback(self.close_channels)
            stack.push_async_callback(self.close_provider)
            stack.push_async_callback(control.close)
            stack.push_async_callback(self.close_memory)
            stack.push_async_callback(self.join_preload)
            stack.push_async_callback(self.close_sessions)
            stack.push_async_callback(self.close_audit)  # after the safe state is recorded
            stack.push_async_callback(self.close_readings)  # once the sensors stopped
            stack.push_async_callback(self.hardware.shutdown)
            stack.push_async_callback(self.automation.aclose)
            stack.push_async_callback(self.close_mqtt)  # offline, no more commands: then the safe state
            stack.push_async_callback(self.close_mcp_servers)  # once no turn can call them
            stack.push_async_callback(self._stop_loops)
            stack.callback(lambda: self.service.stopping(self._stop_reason or "error"))
            await self._start(control)
            await self._stop.wait()

    async def _start(self, control: ControlServer) -> None:
        await self.hardware.start()
        if not self.safe_mode.active:  # held rules hear nothing until they are resumed
            self.automation.listen()
        await self.start_mqtt()
        if self.mqtt is not None:  # other agents and `edge-cli --node` ask through the broker
            self.mqtt.serve_requests(self)
        await control.start()
        self.start_mcp(self)
        self.start_web(self)
        self.start_provider()
        await self.start_memory()
        await self.start_mcp_servers()  # before the agent: its tools are fixed when it is built
        self.build_channels()
        self.start_preload()  # after the channels: they say whether the agent keeps running
        dispatcher = self.build_dispatcher(self.status_text)
        dispatcher.agent.safe_mode = self.safe_mode
        dispatcher.agent.operations = self
        self._tasks.append(SupervisedTask("dispatcher", dispatcher.run).start())
        for name, channel in self.channels.items():
            supervisor = self.supervisors[name] = ListenerSupervisor(
                channel, on_change=self._refresh_service_status)
            self._listeners.append(asyncio.create_task(
                self._listen(supervisor, dispatcher), name=f"listen-{name}"))
        self.start_recorder()  # before the sensors' first reads
        await self.automation.start(self.channels, self.admins, self._down_components,
                                    prompts=self, hold_rules=self.safe_mode.active)
        self.start_backups()
        await self._announce_safe_mode()
        self.storage.tell_to(partial(self.automation.notifier.notify, ("admins",)))
        self._watch_uplink()
        self._log_ready()
        self.service.ready(self._service_status())
        self.ready.set()
        self.hardware.subscribe(self._refresh_service_status)

    def start_backups(self) -> None:
        """``[backup] path``: the agent's own backups, a supervised task (imported only then)."""
        if self.config.backup.enabled:
            from edge.backup.scheduled import ScheduledBackups

            backups = ScheduledBackups(self.config.backup, self.loaded.state_dir, self.loaded.path)
            self._tasks.append(SupervisedTask("backup", backups.run).start())

    def _watch_uplink(self) -> None:
        """With a remote endpoint and a local one: the local answers while the uplink is down."""
        if self.provider is None:
            return
        from edge.providers.uplink import UplinkWatch

        watch = UplinkWatch(self.provider, partial(self.automation.notifier.notify, ("admins",)))
        if watch.needed:
            self._tasks.append(SupervisedTask("uplink", watch.run).start())

    async def _announce_safe_mode(self) -> None:
        """Once at start, in safe mode: the log (status shows it too) and the admins."""
        cause = self.safe_mode.cause
        if cause is None:
            return
        log.error("safe_mode ends=%d window_s=%g last=%r rules=held model=refused", cause.ends,
                  WINDOW_SECONDS, cause.reason)
        await self.automation.notifier.notify(("admins",), cause.refusal())

    async def _resume_automation(self) -> None:
        self.automation.start_rules()

    async def _stop_loops(self) -> None:
        """The channels' listeners, the dispatcher and memory upkeep."""
        for task in self._listeners:
            task.cancel()
        await asyncio.gather(*self._listeners, close_all(self._tasks), return_exceptions=True)

    def _note_unanswered_input(self) -> None:
        if self.agent is not None and self.agent.failed_turns and self.piped_input():
            self.exit_code = 1  # a script piping into the agent must see that it got no answer

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
        its channels): the board supervisor, the MQTT bridge, each MCP server's link, the
        dispatcher, memory upkeep, the rules, the scheduler, the heartbeat, each sensor's
        polling and the sensor history's writer and upkeep."""
        bridge = self.mqtt.supervised_tasks() if self.mqtt is not None else []
        mcp = self.mcp_servers.supervised_tasks() if self.mcp_servers is not None else []
        return [*self.hardware.supervised_tasks(), *bridge, *mcp, *self._tasks,
                *self.automation.supervised_tasks(), *self.recorder.supervised_tasks()]

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

    def _refresh_service_status(self, event: Any = None) -> None:
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
