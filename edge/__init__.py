"""edge-agent: a compact AI agent runtime for Raspberry Pi hardware."""

__version__ = "0.1.0"
