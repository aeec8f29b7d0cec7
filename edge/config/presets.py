"""Named endpoints: wire format, base URL, auth style and key variable (one
OpenAI-compatible implementation serves many services, told apart by base URL and AuthStyle).

Light on purpose (no httpx, no config schema): ``edge-cli models`` reads it without a network stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["openai", "anthropic", "gemini"]
AuthStyle = Literal["bearer", "x-api-key", "header", "none"]


@dataclass(frozen=True)
class Preset:
    kind: Kind
    base_url: str
    key_variable: str | None
    auth_style: AuthStyle = "bearer"


PRESETS: dict[str, Preset] = {
    "openai": Preset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "ollama": Preset("openai", "http://127.0.0.1:11434/v1", "OLLAMA_API_KEY"),
    "llamacpp": Preset("openai", "http://127.0.0.1:8080/v1", "LLAMACPP_API_KEY"),
    "openrouter": Preset("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "groq": Preset("openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "deepseek": Preset("openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "mistral": Preset("openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "xai": Preset("openai", "https://api.x.ai/v1", "XAI_API_KEY"),
    "together": Preset("openai", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "fireworks": Preset("openai", "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    "anthropic": Preset("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "x-api-key"),
    "gemini": Preset("gemini", "https://generativelanguage.googleapis.com", "GEMINI_API_KEY",
                     "none"),
}

DEFAULT_KEY_VARIABLE: dict[str, str] = {"openai": "OPENAI_API_KEY",
                                         "anthropic": "ANTHROPIC_API_KEY",
                                         "gemini": "GEMINI_API_KEY"}


def preset_names() -> list[str]:
    return sorted(PRESETS)
