"""A package's lazy face (PEP 562): its ``__init__`` names each module and the exported names it
holds, and a name is loaded from its module on first use, so importing the face loads nothing of
the package. The face keeps its ``if TYPE_CHECKING:`` imports, which tell type checkers the names.

>>> __getattr__ = lazy_face("edge.core", {"durations": ("parse_duration",)})
>>> __getattr__("parse_duration").__name__
'parse_duration'
>>> __getattr__("Nothing")
Traceback (most recent call last):
AttributeError: module 'edge.core' has no attribute 'Nothing'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module


def lazy_face(package: str, homes: Mapping[str, tuple[str, ...]]) -> Callable[[str], object]:
    """The face's module ``__getattr__``: ``homes`` maps each module of ``package`` to the names of
    ``__all__`` it holds."""
    module_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> object:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{module}"), name)

    return __getattr__
