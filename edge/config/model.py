"""The configuration schema. Unknown keys are errors; secrets are SecretStr and redacted on show."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from peripherals.base import PinMode, Pull


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


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
    max_tool_iterations: int = Field(10, ge=1, le=50)
    instructions: str = ""
    """Extra instructions appended to the system prompt's Your Task section."""


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
    """One allowlisted pin: its mode, and for outputs a safe level and an on-time limit."""

    mode: PinMode
    safe: Literal["off", "on"] | None = None
    max_on_seconds: float | None = Field(None, gt=0)
    pull: Pull = Pull.UP

    @model_validator(mode="after")
    def _outputs_only(self) -> PinConfig:
        if self.mode is PinMode.INPUT and (self.safe is not None or self.max_on_seconds is not None):
            raise ValueError("safe and max_on_seconds apply to output and pwm pins, not input")
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


BoardConfig = GpioBoardConfig


class SecurityConfig(Section):
    max_actuations_per_minute: int = Field(30, ge=1)
    """Per caller; reads are not limited."""


class CliChannelConfig(Section):
    enabled: bool = True


class ChannelsConfig(Section):
    cli: CliChannelConfig = Field(default_factory=CliChannelConfig)


class Config(Section):
    paths: PathsConfig = Field(default_factory=PathsConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    provider: ProviderConfig = Field(default_factory=ProviderConfig)
    security: SecurityConfig = Field(default_factory=SecurityConfig)
    boards: dict[str, BoardConfig] = Field(default_factory=lambda: {"gpio": GpioBoardConfig()})
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
