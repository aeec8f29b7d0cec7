"""The runtime's error hierarchy; every message says what to do next.

Every error the agent raises is an :class:`EdgeError`, or a ``BoardError`` from the board
drivers (``peripherals`` imports nothing from ``edge``, so that tree is drawn in
:mod:`peripherals.exc`). ``except EdgeError`` catches whatever the agent refused or failed to do,
never a bug. Errors live beside what raises them (a channel's error in its channel's module) and
are drawn here, indented by inheritance: ``Name(Builtin)`` when a builtin is mixed in, ``[module]``
when the class lives elsewhere, then when it is raised::

    EdgeError: the agent refused or failed to do something (exit 1)
        ConfigError(ValueError): the config file or environment is wrong; names file and key (exit 2)
            InterlockKeyError [edge.automation.interlocks]: one key of an interlock is wrong
        UsageError: a command, or a job added at runtime, was given wrongly (exit 2)
            CommandLineError [edge.cli.main]: argparse refused the command line; carries the usage
            PairingCodeError(ValueError) [edge.core.keycodes]: a pairing code that is not one (a typo)
            WrongPassphrase [edge.backup.sealing]: a sealed backup its passphrase does not open
        PolicyDenied: the security policy refused an action (a pin, a rate limit, an admin's job)
            InterlockRefused [edge.automation.interlocks]: an interlock refused an actuation
        DaemonUnavailable: no running agent answered on the control socket
        DaemonNotAnswering [edge.control.client]: an agent took the connection but gave no answer
        SocketForbidden [edge.control.client]: an agent runs but this user may not use its socket
        AgentRunning [edge.core.ownership]: another agent holds the state directory and the pins
        ProviderError [edge.providers.base]: a model call failed (status, retry_after, retryable)
            StreamInterrupted [edge.providers.base]: a stream ended before it finished
        BudgetSpent [edge.agent.budget]: the day's token budget refused a model call
        MemoryFailure [edge.memory.base]: the memory store failed (locked or corrupt file, query)
            EmbeddingError [edge.memory.base]: the embedder cannot run (model missing, server down)
            NothingToReindex [edge.memory.base]: the backend keeps no vectors to re-embed (exit 2)
            StaleEmbeddings [edge.memory.base]: stored vectors come from another embedding model
        SharedMemoryRefused [edge.memory.access]: someone not an admin changed a shared memory
        ChannelCapabilityMissing [edge.channels.base]: a channel asked for what it cannot do
        ListenerStalled [edge.channels.supervisor]: a listener runs but has stopped working
        SignalRPCError [edge.channels.signal]: signal-cli's JSON-RPC failed or returned an error
        TelegramError [edge.channels.telegram_api]: the Bot API answered with an error
        TelegramNetworkError [edge.channels.telegram_api]: the Bot API could not be reached
        TranscriptionError [edge.transcription]: a voice note could not be transcribed (key, size, timeout)
        VoiceNoteUnavailable [edge.channels.voice]: a channel could not fetch a voice note
        MqttUnavailable [edge.mqtt.link]: the broker cannot be reached or refused us
        BadPayload(ValueError) [edge.mqtt.commands]: an MQTT command means nothing for its pin
        ActionFailed [edge.automation.actions]: a rule's or schedule's action could not be done
        RemoteToolError [edge.mcp.client]: another MCP server's tool could not be called, or failed
            ServerUnavailable [edge.mcp.client]: that server is not connected now (restarting)
            CallTimedOut [edge.mcp.client]: the server gave no answer within timeout_seconds
        ServerLost [edge.mcp.client]: an MCP server's session ended; its link is restarted
        SandboxUnavailable [edge.mcp.sandbox]: no sandbox here for a stdio MCP server; it is not started
        NodeUnknown [edge.fleet.remote]: no node of that name on the broker (edge-cli --node)
        NotPaired [edge.fleet.remote]: this machine shares no key with that node (edge-cli --node)
        BackupInvalid(ValueError) [edge.backup.archive]: not a backup archive, or one altered or damaged (exit 2)
        StepFailed [edge.scenario.runner]: a scenario's step did not find what it expected (exit 1)
    BoardError [peripherals.exc]: a board or sensor failed; its tree is drawn in peripherals.exc

A builtin is mixed in where a caller may fairly catch it (gpiozero's way): ``ValueError`` for a
wrong value, ``LookupError`` for a name not found. The ``OSError`` family is left to the
operating system's own errors, so an ``except OSError`` around a file or a socket never swallows
a policy, channel or board error.

Exit codes follow the CLI contract, :data:`EXIT_CODES`: 1 for a refused or failed action, 2 for
bad usage or config. ``tests/test_exceptions.py`` checks the drawing against the classes.
"""

TYPE_CHECKING = False
"""Not typing's (``edge-cli --version`` imports this module and nothing of typing); mypy reads
the name the same way."""
if TYPE_CHECKING:
    from edge.core.validation import Problem

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_RUNNING = 3
EXIT_WARNINGS = 4
EXIT_INTERRUPTED = 130
"""128 + SIGINT, the shell's code for a command Ctrl-C ended."""

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    EXIT_FAILED: "refused or failed action",
    EXIT_USAGE: "bad usage or config",
    EXIT_NOT_RUNNING: "status with no agent running",
    EXIT_WARNINGS: "doctor found warnings but no failure",
    EXIT_INTERRUPTED: "a --hold ended early by a signal",
}
"""Every exit code of ``edge-cli`` and what it means, in one place: ``edge-cli --help`` prints
this table and ``tests/cli/test_exit_codes.py`` holds the manual's list to it. With ``--json``
the code is also the object's ``exit_code``, and ``ok`` is true exactly when it is 0."""


class EdgeError(Exception):
    exit_code = EXIT_FAILED


class ConfigError(EdgeError, ValueError):
    """The configuration file or environment is wrong; the message names file and key."""

    exit_code = EXIT_USAGE
    problems: "tuple[Problem, ...]" = ()  # quoted: no __future__ import on --version's path
    """Each problem the message names, at its key, when it names several
    (:func:`edge.config.loader.invalid_config`): ``edge-cli config check`` lists them all."""


class UsageError(EdgeError):
    exit_code = EXIT_USAGE


class PolicyDenied(EdgeError):
    """The security policy refused an action."""


class DaemonUnavailable(EdgeError):
    """No running agent answered on the control socket."""
