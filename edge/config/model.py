"""The configuration schema. Unknown keys are errors; secrets are SecretStr and redacted on show."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import (
    AfterValidator,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from edge.config.backup import BackupConfig
from edge.config.boards import DEFAULT_BOARD, BoardConfig, parse_board
from edge.config.cameras import CameraConfig, CameraName
from edge.config.channels import ChannelsConfig
from edge.config.interlocks import InterlockConfig
from edge.config.mcp import McpConfig
from edge.config.mqtt import MqttConfig
from edge.config.rules import HeartbeatConfig, RuleConfig
from edge.config.schedules import ScheduleConfig, duplicate_names
from edge.config.section import Hours, Minutes, Seconds, Section
from edge.config.sensors import SensorConfig, SensorName
from edge.config.transcription import TranscriptionConfig
from edge.config.urls import http_url
from edge.config.web import WebConfig


class PathsConfig(Section):
    state_dir: str | None = None


class LoggingConfig(Section):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["keyvalue", "json"] = "keyvalue"
    """One event per line: ``level=info logger=... event=... k=v`` or one JSON object."""
    file: str = "edge-agent.log"
    """Also log here when not under systemd (journald keeps the service's logs); relative to the
    state directory; empty disables it."""


class AgentConfig(Section):
    max_tool_iterations: int = Field(default=10, ge=1, le=50)
    receipts: bool = True
    """End each reply to a turn that actuated or refused something with the agent's own receipt
    (one line per pin, what the board read back); ``[channels.NAME] receipts`` overrides it."""
    local_intents: bool = True
    """Understand the requests people send most ("turn the pump on", "is the fan on?", "what is
    the temperature in the greenhouse?", "what did the pump do today?") without a model, from
    the operation catalog's words and the config's pin and sensor names."""
    instructions: str = ""
    """Extra instructions appended to the system prompt's Your Task section."""
    workspace: str | None = None
    """Holds IDENTITY.md, SOUL.md, USER.md, AGENTS.md; default <state_dir>/workspace."""
    interrupt_on_new_message: bool = True
    debounce_ms: int = Field(default=300, ge=0, le=10_000)
    debounce_max_wait_ms: int = Field(default=2_000, ge=0, le=60_000)
    message_timeout_seconds: Seconds = Field(default=300.0, gt=0)
    timeout_scale_cap: int = Field(default=4, ge=1)
    tool_result_max_chars: int = Field(default=4_000, ge=200)
    context_window_tokens: int = Field(default=128_000, ge=1_000)
    history_share: float = Field(default=0.5, gt=0.05, le=0.9)
    outbox: str | None = None
    """The only directory ``[IMAGE:path]`` in a reply may send files from (PNG, JPEG, GIF or
    WebP, checked by content); default <workspace>/outbox."""
    image_max_bytes: int = Field(default=10_000_000, ge=1, le=50_000_000)
    """Larger images are not sent (Telegram takes photos up to 10 MB)."""

    def outbox_dir(self, state_dir: Path) -> Path:
        """``outbox``, or ``outbox/`` in the workspace (itself default <state_dir>/workspace)."""
        if self.outbox:
            return Path(self.outbox).expanduser()
        workspace = Path(self.workspace).expanduser() if self.workspace else state_dir / "workspace"
        return workspace / "outbox"


class SessionsConfig(Section):
    daily_reset_hour: int | None = Field(default=None, ge=0, le=23)
    idle_timeout_minutes: Minutes | None = Field(default=None, gt=0)
    ended_transcript_days: int = Field(default=30, ge=1)
    """How long the transcript of a session that ended (``/new``, a reset) is kept."""


class EndpointConfig(Section):
    """One LLM endpoint. Without ``kind``/``preset`` it is an OpenAI-compatible chat-completions
    endpoint (OpenAI, Ollama, OpenRouter, llama.cpp…) at ``base_url``."""

    name: str = ""
    """How /models and `edge-cli models` call it; default: the preset, else the kind."""
    kind: Literal["openai", "anthropic", "gemini"] | None = None
    preset: str = ""
    """openai, ollama, llamacpp, openrouter, groq, deepseek, mistral, xai, together, fireworks,
    anthropic, gemini: fills kind, base_url, auth style and the key's environment variable."""
    base_url: Annotated[str, AfterValidator(http_url)] = ""
    """``http://`` or ``https://``; empty: the preset's (or the kind's service)."""
    model: str = ""
    """Required once an endpoint is named (``base_url``, ``preset`` or ``kind``): no preset
    implies a model. Empty everywhere: no model; direct commands only."""
    api_key: SecretStr | None = None
    api_keys: list[SecretStr] = []
    """More keys, rotated round-robin when the endpoint answers 429."""
    auth_style: Literal["bearer", "x-api-key", "header", "none"] | None = None
    auth_header: str = ""
    """The header that carries the key when auth_style = "header"."""
    temperature: float = Field(default=0.3, ge=0.0, le=2.0)
    timeout_seconds: Seconds = Field(default=120.0, gt=0)
    max_tokens: int | None = Field(default=None, ge=1)
    """The longest reply asked for; the spend cap reserves as much for each call's reply
    (``[provider]``'s; 1,000 tokens when unset)."""
    tool_mode: Literal["auto", "native", "prompt"] = "auto"
    """auto: native tools, falling back to the <tool_call> text protocol if the endpoint refuses."""
    fallback_models: list[str] = []
    compact_profile: bool | None = None
    """What a small local model can carry: a short system prompt, the tools a turn can need with
    pin and sensor names as enums, the changing sections after the tools (a prompt cache keeps
    the rest). Unset: on for the ollama and llamacpp presets and a base_url on loopback or the
    LAN."""

    @property
    def compact(self) -> bool:
        """Whether the compact profile applies (``compact_profile``, else where it points)."""
        if self.compact_profile is not None:
            return self.compact_profile
        from edge.config.presets import PRESETS
        from edge.config.urls import on_local_network

        if self.preset in ("ollama", "llamacpp"):
            return True
        url = self.base_url or (PRESETS[self.preset].base_url if self.preset else "")
        return bool(url) and on_local_network(url)

    @field_validator("model")
    @classmethod
    def _model_for_endpoint(cls, model: str, info: ValidationInfo) -> str:
        named = [key for key in ("base_url", "preset", "kind") if info.data.get(key)]
        if named and not model.strip():
            names = "names" if len(named) == 1 else "name"
            raise ValueError(f"is empty, but {' and '.join(named)} {names} an endpoint: no model "
                             "would ever be asked; set model = \"...\" (its name at that "
                             "endpoint, e.g. \"qwen2.5:1.5b\" on Ollama), or remove "
                             f"{' and '.join(named)} to run with direct commands only")
        return model

    @model_validator(mode="after")
    def check(self) -> Self:
        from edge.config.presets import PRESETS

        if self.preset and self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}; one of: {', '.join(sorted(PRESETS))}")
        if self.auth_style == "header" and not self.auth_header:
            raise ValueError('auth_style = "header" needs auth_header, the header\'s name')
        return self

    @property
    def resolved_kind(self) -> str:
        from edge.config.presets import PRESETS

        return self.kind or (PRESETS[self.preset].kind if self.preset else "openai")

    @property
    def display_name(self) -> str:
        return self.name or self.preset or self.resolved_kind

    @property
    def configured(self) -> bool:
        has_url = bool(self.base_url or self.preset or self.resolved_kind != "openai")
        return bool(self.model and has_url)


class RouteConfig(Section):
    """``[provider.routes.HINT]``: where ``hint:HINT`` (or a query matching the keywords) goes."""

    endpoint: str = ""
    """The name of the primary or a fallback endpoint; default: the primary."""
    model: str = ""
    keywords: list[str] = []
    patterns: list[str] = []
    min_length: int | None = Field(default=None, ge=0)
    max_length: int | None = Field(default=None, ge=0)
    priority: int = 0


class ProviderConfig(EndpointConfig):
    """The primary endpoint, its failover chain (``[[provider.fallbacks]]``), routes and retries."""

    max_retries: int = Field(default=2, ge=0, le=10)
    backoff_seconds: Seconds = Field(default=0.5, ge=0)
    backoff_max_seconds: Seconds = Field(default=10.0, ge=0)
    max_retry_after_seconds: Seconds = Field(default=30.0, ge=0)
    """A longer Retry-After moves on to the next model or provider instead of waiting."""
    cooldown_seconds: Seconds = Field(default=30.0, ge=0)
    """How long a provider that failed sits out while the rest of the chain answers."""
    fallbacks: list[EndpointConfig] = []
    routes: dict[str, RouteConfig] = {}
    daily_token_budget: int | None = Field(default=None, ge=1, le=10_000_000_000)
    """Tokens the whole agent may spend a local day (input + output, every call, a cancelled or
    failed one at its estimate); checked before each call, so it is passed by one call at most;
    then model turns are refused until midnight. None: no cap."""
    per_user_daily_tokens: int | None = Field(default=None, ge=1, le=10_000_000_000)
    """Tokens each person (``channel:sender``) may spend a local day. None: no cap."""

    @model_validator(mode="after")
    def check_chain(self) -> Self:
        """After :meth:`EndpointConfig.check` (pydantic runs both)."""
        names = [self.display_name] + [f.display_name for f in self.fallbacks]
        if len(set(names)) != len(names):
            raise ValueError(f"endpoint names must differ (got {names}); set name = \"...\"")
        for fallback in self.fallbacks:
            if not fallback.configured:
                raise ValueError(f"fallback {fallback.display_name!r} needs a model and a "
                                 "base_url or preset")
        for hint, route in self.routes.items():
            if route.endpoint and route.endpoint not in names:
                raise ValueError(f"route {hint!r} names endpoint {route.endpoint!r}; "
                                 f"known: {', '.join(names)}")
        return self


class SecurityConfig(Section):
    max_actuations_per_minute: int = Field(default=30, ge=1)
    """Per caller; reads are not limited."""
    autonomy: Literal["full", "supervised", "readonly"] = "supervised"
    """supervised: actuations the model asks for need the requester's approval (chat channels)."""
    approval_timeout_seconds: Seconds = Field(default=120.0, gt=0)
    admins_approve_themselves: bool = False
    """true: an admin's own model turns on a chat channel (``[channels.telegram] admins``) need
    no approval; everyone else's still do."""


class MemoryConfig(Section):
    """Long-term memory: where it lives, how it embeds, how it is kept tidy."""

    backend: Literal["sqlite", "markdown", "none"] = "sqlite"
    embedder: str = "onnx"
    """onnx (local, offline) | openai | custom:<base_url> (Ollama, local servers) | none."""
    model_path: str | None = None
    """A local .onnx sentence-embedding model instead of the packaged all-MiniLM-L6-v2."""
    model_sha256: str | None = None
    quantize: bool = True
    """Re-quantise the onnx model once (cached in the state dir): about 100 MB less memory."""
    embedding_model: str = "text-embedding-3-small"
    embedding_dimensions: int | None = Field(default=None, ge=1)
    api_key: SecretStr | None = None
    vector_weight: float = Field(default=0.7, ge=0.0, le=1.0)
    keyword_weight: float = Field(default=0.3, ge=0.0, le=1.0)
    min_relevance: float = Field(default=0.4, ge=0.0, le=1.0)
    recall_limit: int = Field(default=5, ge=1, le=50)
    embedding_cache_size: int = Field(default=10_000, ge=0)
    conversation_retention_days: int = Field(default=30, ge=1)
    hygiene_interval_hours: Hours = Field(default=12.0, gt=0)
    snapshot_on_hygiene: bool = True
    autosave: bool = True
    autosave_min_chars: int = Field(default=20, ge=1)
    preload: bool = True
    """Load (and on first start re-quantise) the onnx model in the background at start-up, so
    the first message does not wait for it."""
    open_timeout_seconds: Seconds = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def check(self) -> Self:
        if self.embedder in ("onnx", "openai", "none"):
            return self
        if self.embedder.startswith("custom:") and self.embedder[len("custom:"):].startswith(
                ("http://", "https://")):
            return self
        raise ValueError("embedder must be onnx, openai, none or custom:<http(s) base URL>")


class AuditConfig(Section):
    """The audit trail of every actuation, refusal, auto-off and safe state (``<state>/audit.db``)."""

    keep_days: float = Field(default=365.0, gt=0)
    max_megabytes: float = Field(default=50.0, gt=0)
    """The oldest records go while the rest take more than this."""


DEFAULT_ORIGIN = "configuration (built-in defaults + environment)"
"""What errors name when no file was read."""


class Config(Section):
    paths: PathsConfig = PathsConfig()
    logging: LoggingConfig = LoggingConfig()
    agent: AgentConfig = AgentConfig()
    sessions: SessionsConfig = SessionsConfig()
    provider: ProviderConfig = ProviderConfig()
    security: SecurityConfig = SecurityConfig()
    boards: dict[str, BoardConfig] = {DEFAULT_BOARD: parse_board({})}
    channels: ChannelsConfig = ChannelsConfig()
    memory: MemoryConfig = MemoryConfig()
    audit: AuditConfig = AuditConfig()
    backup: BackupConfig = BackupConfig()
    mqtt: MqttConfig = MqttConfig()
    mcp: McpConfig = McpConfig()
    web: WebConfig = WebConfig()
    schedules: list[ScheduleConfig] = []
    rules: list[RuleConfig] = []
    heartbeat: HeartbeatConfig = HeartbeatConfig()
    sensors: dict[SensorName, SensorConfig] = {}
    cameras: dict[CameraName, CameraConfig] = {}
    interlocks: list[InterlockConfig] = []
    transcription: TranscriptionConfig = TranscriptionConfig()
    _origin: str = PrivateAttr(default="")

    @property
    def origin(self) -> str:
        """Where this config was read from, as errors name it: the file, or what stood in for
        one (:func:`edge.config.loader.load_config` tells it)."""
        return self._origin or DEFAULT_ORIGIN

    def read_from(self, origin: str) -> Self:
        """This config, told where it was read from."""
        self._origin = origin
        return self

    @model_validator(mode="after")
    def check(self) -> Self:
        if duplicate := duplicate_names(self.schedules):
            raise ValueError(f"schedules: names must be unique; {', '.join(map(repr, duplicate))} "
                             "appears more than once")
        if duplicate := sorted(n for n, c in Counter(i.name for i in self.interlocks).items()
                               if c > 1):
            raise ValueError(f"interlocks: names must be unique; "
                             f"{', '.join(map(repr, duplicate))} appears more than once")
        if self.web.enabled and self.mcp.enabled and self.web.port == self.mcp.port:
            raise ValueError(f"web: listen {self.web.listen} takes [mcp] listen's port "
                             f"{self.mcp.port}: give the page another port (such as "
                             f"{self.web.host}:8080)")
        return self
