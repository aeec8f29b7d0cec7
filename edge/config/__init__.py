"""Configuration: one TOML file, checked by the records in :mod:`edge.config.model`."""
