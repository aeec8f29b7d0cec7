"""Configuration: one TOML file, validated by the pydantic models in :mod:`edge.config.model`."""
