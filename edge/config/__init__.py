"""Configuration: one TOML file, checked by the pydantic models in :mod:`edge.config.model`.

``load_config`` finds the file, applies the ``EDGE_*`` overrides and checks the result into a
:class:`LoadedConfig` (its :class:`Config` and path), or raises a ConfigError naming every
problem; ``load_raw`` stops before the check (no pydantic), for quick commands that read a key or
two. A section's own model is imported from its module (``edge.config.model``, ``channels``,
``mqtt``, ``rules``, ``schedules``, ``sensors``).

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.config.loader import LoadedConfig, load_config
    from edge.config.locate import RawConfig, load_raw
    from edge.config.model import Config

__all__ = ["Config", "LoadedConfig", "RawConfig", "load_config", "load_raw"]

_HOMES = {
    "loader": ("LoadedConfig", "load_config"),
    "locate": ("RawConfig", "load_raw"),
    "model": ("Config",),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
