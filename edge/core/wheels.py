"""Optional dependencies that PyPI has no wheels for on some machines, and why one is missing.

``pyproject.toml`` leaves numpy, onnxruntime, onnx, lgpio and the MCP SDK out on 32-bit Pi OS
(``armv7l``/``armv6l``): PyPI has no armv7 wheels of them (the SDK needs ``cffi``), and nothing is
compiled during set-up. What needs them says so with :func:`unavailable_reason` instead of
failing on an import.

>>> unavailable_reason("json") is None
True
>>> unavailable_reason("no_such_module_xyz")
'no_such_module_xyz: not installed in this environment'
"""

from __future__ import annotations

import importlib.util
import platform

THIRTY_TWO_BIT_ARM = ("armv7l", "armv6l")
"""``platform.machine()`` on 32-bit Pi OS."""


def missing(*modules: str) -> list[str]:
    """Those of ``modules`` that cannot be imported here (nothing is imported to find out)."""
    return [name for name in modules if importlib.util.find_spec(name) is None]


def on_32_bit_arm() -> bool:
    return platform.machine() in THIRTY_TWO_BIT_ARM


def unavailable_reason(*modules: str) -> str | None:
    """Why some of ``modules`` are missing (None: all are installed)."""
    absent = missing(*modules)
    if not absent:
        return None
    where = (f"PyPI has no {platform.machine()} wheels for {'them' if len(absent) > 1 else 'it'} "
             "(32-bit Pi OS), so edge-agent does not install "
             f"{'them' if len(absent) > 1 else 'it'} there"
             if on_32_bit_arm() else "not installed in this environment")
    return f"{' and '.join(absent)}: {where}"


def install_hint(what: str, module: str, pip_name: str, debian_package: str) -> str | None:
    """How to get ``module`` (``pip_name`` on PyPI, ``debian_package`` in Pi OS) so that ``what``
    works, or None when it is installed: pip here, Debian's package on 32-bit Pi OS, where pip
    leaves it out.

    >>> install_hint("charts", "json", "json", "python3-json") is None
    True
    """
    reason = unavailable_reason(module)
    if reason is None:
        return None
    debian = (f"install Raspberry Pi OS's package (sudo apt install {debian_package}) for a venv "
              "that sees system packages (deploy/install.sh makes it with "
              "--system-site-packages there)")
    how = debian if on_32_bit_arm() else (f"pip install {pip_name} into the agent's environment; "
                                          f"on 32-bit Pi OS, {debian}")
    return f"{what} need {pip_name} ({reason}): {how}"


def mcp_sdk_unavailable() -> str | None:
    """Why the MCP SDK cannot be used here, and what to do (None: it can). 32-bit Pi OS does not
    get it: it needs ``cffi``, which PyPI has no armv7 wheel of, so ``pyproject.toml`` leaves it
    out there. Nothing is imported to find out (``edge-cli mcp`` asks before its SDK loads)."""
    if not missing("mcp"):
        return None
    if on_32_bit_arm():
        return ("MCP is not available on 32-bit Pi OS: the MCP SDK needs cffi, which PyPI has no "
                "armv7 wheel of, so edge-agent does not install it there; 64-bit Pi OS on the same "
                "Pi has it")
    return "MCP needs the mcp package: reinstall edge-agent (pip install -e . in its venv)"
