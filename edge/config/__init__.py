"""Configuration: one TOML file, checked by the pydantic models in :mod:`edge.config.model`."""
