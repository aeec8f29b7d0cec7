"""The configuration schema. Unknown keys are errors; secrets are SecretStr and redacted on show."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, SecretStr, Tag, model_validator

from peripherals.base import PinMode, Pull


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class PathsConfig(Section):
    state_dir: str | None = None


class LoggingConfig(Section):
    level: Literal["debug", "info", "warning", "error"] = "info"


class AgentConfig(Section):
    max_tool_iterations: int = Field(10, ge=1, le=50)
    instructions: str = ""
    """Extra instructions appended to the system prompt's Your Task section."""
    workspace: str | None = None
    """Holds IDENTITY.md, SOUL.md, USER.md, AGENTS.md; default <state_dir>/workspace."""
    interrupt_on_new_message: bool = True
    debounce_ms: int = Field(300, ge=0, le=10_000)
    debounce_max_wait_ms: int = Field(2_000, ge=0, le=60_000)
    message_timeout_seconds: float = Field(300.0, gt=0)
    timeout_scale_cap: int = Field(4, ge=1)
    tool_result_max_chars: int = Field(4_000, ge=200)
    context_window_tokens: int = Field(128_000, ge=1_000)
    history_share: float = Field(0.5, gt=0.05, le=0.9)


class SessionsConfig(Section):
    daily_reset_hour: int | None = Field(None, ge=0, le=23)
    idle_timeout_minutes: float | None = Field(None, gt=0)


class ProviderConfig(Section):
    """An OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, OpenRouter, llama.cpp…)."""

    base_url: str = ""
    model: str = ""
    api_key: SecretStr | None = None
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    timeout_seconds: float = Field(120.0, gt=0)

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class PinConfig(Section):
    """One allowlisted pin: its mode (analog needs an arduino or stm32 board), and for outputs a
    safe level and an on-time limit."""

    mode: PinMode
    safe: Literal["off", "on"] | None = None
    max_on_seconds: float | None = Field(None, gt=0)
    pull: Pull = Pull.UP

    @model_validator(mode="after")
    def _outputs_only(self) -> PinConfig:
        if self.mode in (PinMode.INPUT, PinMode.ANALOG) and (
                self.safe is not None or self.max_on_seconds is not None):
            raise ValueError("safe and max_on_seconds apply to output and pwm pins, not "
                             f"{self.mode.value}")
        return self


def _default_pins() -> dict[str, PinConfig]:
    return {"led": PinConfig(mode=PinMode.OUTPUT, safe="off"),
            "button": PinConfig(mode=PinMode.INPUT)}


class GpioBoardConfig(Section):
    """The Pi header. Pin keys and alias targets are gpiozero names (GPIO17, 17, BOARD11)."""

    type: Literal["gpio"] = "gpio"
    simulate: bool = True
    aliases: dict[str, str] = Field(default_factory=lambda: {"led": "GPIO17", "button": "GPIO27"})
    pins: dict[str, PinConfig] = Field(default_factory=_default_pins)


class SerialBoardConfig(Section):
    """A microcontroller on a serial port. Pins start empty: list the ones the agent may use."""

    port: str = Field(min_length=1)
    """``/dev/ttyACM0``, ``/dev/serial/by-id/...``, or ``socket://HOST:PORT`` (an emulator)."""
    aliases: dict[str, str] = Field(default_factory=dict)
    pins: dict[str, PinConfig] = Field(default_factory=dict)
    watchdog_ms: int = Field(1000, ge=0, le=65535)
    """Firmware drives the safe values when the host is silent this long; 0 turns it off."""


class ArduinoBoardConfig(SerialBoardConfig):
    """An Uno-class board running Firmata (ours with the watchdog, or stock StandardFirmata).
    Pins are D0..D13 and A0..A5."""

    type: Literal["arduino"]
    baudrate: int = 57600
    sampling_interval_ms: int = Field(19, ge=1, le=16383)
    """How often the firmware samples analog inputs and reports them."""


class Stm32BoardConfig(SerialBoardConfig):
    """An STM32F4 board running edge-agent firmware (firmware/stm32). Pins are PA0, PC13..."""

    type: Literal["stm32"]
    baudrate: int = 115200
    request_timeout_seconds: float = Field(0.5, gt=0, le=30)


def _board_type(value) -> str:
    if isinstance(value, dict):
        return value.get("type", "gpio")
    return getattr(value, "type", "gpio")


BOARD_TYPES = ("gpio", "arduino", "stm32")

BoardConfig = Annotated[
    Annotated[GpioBoardConfig, Tag("gpio")]
    | Annotated[ArduinoBoardConfig, Tag("arduino")]
    | Annotated[Stm32BoardConfig, Tag("stm32")],
    Discriminator(_board_type),
]


class SecurityConfig(Section):
    max_actuations_per_minute: int = Field(30, ge=1)
    """Per caller; reads are not limited."""


class ChannelAccessConfig(Section):
    """Who may talk to the agent on a channel (empty list = nobody, "*" = everyone)."""

    allowed_users: list[str] = Field(default_factory=list)
    require_mention_in_groups: bool = True
    rate_limit_per_minute: int = Field(20, ge=1)


class CliChannelConfig(ChannelAccessConfig):
    enabled: bool = True
    allowed_users: list[str] = Field(default_factory=lambda: ["*"])


class ChannelsConfig(Section):
    cli: CliChannelConfig = Field(default_factory=CliChannelConfig)


class Config(Section):
    paths: PathsConfig = Field(default_factory=PathsConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
    provider: ProviderConfig = Field(default_factory=ProviderConfig)
    security: SecurityConfig = Field(default_factory=SecurityConfig)
    boards: dict[str, BoardConfig] = Field(default_factory=lambda: {"gpio": GpioBoardConfig()})
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
