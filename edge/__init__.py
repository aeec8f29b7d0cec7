"""edge-agent: a compact AI agent runtime for Raspberry Pi hardware.

Each package below has a face (its ``__init__``) whose ``__all__`` names what its users import;
this top one names only the version.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
