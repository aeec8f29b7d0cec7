"""Choosing and loading gpiozero's pin factory for the Pi's real header, with errors that say
what is wrong and how to fix it. Nothing here ever falls back to mock pins: a header that cannot
be driven is reported down, because an agent that says "on" while the relay never moves is the
worst failure this project can have.

>>> FACTORY_NAMES
('auto', 'lgpio', 'rpigpio', 'pigpio', 'native')
>>> describe_chip(None)
''
"""

from __future__ import annotations

import errno
import importlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

from gpiozero.exc import PinUnknownPi
from gpiozero.pins import local as local_pins

from peripherals.exc import BoardUnavailable

log = logging.getLogger(__name__)

FACTORIES = {
    "lgpio": ("peripherals.lgpio_pins", "LGPIOFactory"),  # gpiozero's, with exact PWM duty
    "rpigpio": ("gpiozero.pins.rpigpio", "RPiGPIOFactory"),
    "pigpio": ("gpiozero.pins.pigpio", "PiGPIOFactory"),
    "native": ("gpiozero.pins.native", "NativeFactory"),
}
FACTORY_NAMES = ("auto", *FACTORIES)
AUTO_ORDER = ("lgpio", "rpigpio", "pigpio")
"""``auto`` never reaches the native factory: it bangs registers through /dev/gpiomem, which the
service's device sandbox blocks, and it does not know the Pi 5. Ask for it by name if you must."""

INSTALL_HINT = {
    "lgpio": "install it in the agent's environment: `pip install 'lgpio>=0.2.2'` (deploy/"
             "install.sh does this; on 32-bit Pi OS: `sudo apt install python3-lgpio` and a venv "
             "created with --system-site-packages)",
    "rpigpio": "install it: `pip install RPi.GPIO` (not supported on the Pi 5: use lgpio)",
    "pigpio": "install it: `pip install pigpio`, and run the pigpiod daemon "
              "(`sudo systemctl enable --now pigpiod`)",
    "native": "it ships with gpiozero; reinstall gpiozero",
}


@dataclass
class LoadedFactory:
    """A real pin factory and what it drives: ``name`` (lgpio...), ``chip`` (a /dev path or
    ''), ``model`` (gpiozero's Pi model, e.g. 4B) and ``revision`` (hex board revision)."""

    factory: Any
    name: str
    chip: str
    model: str
    revision: str
    workdir: str | None = None
    """lgpio's private working directory, removed when the board closes."""

    def close(self, *, release_chip: bool = True) -> None:
        """Remove the private working directory and (unless lines must stay driven until the
        process exits) release the chip."""
        if release_chip:
            self.factory.close()
        _remove(self.workdir)
        self.workdir = None

    @property
    def summary(self) -> str:
        where = f" on {self.chip}" if self.chip else ""
        return f"{self.name}{where}, Raspberry Pi {self.model} (revision {self.revision})"


def describe_chip(factory: Any) -> str:
    """The character device an lgpio factory opened (``/dev/gpiochip0``), else ''."""
    chip = getattr(factory, "chip", None) if factory is not None else None
    return f"/dev/gpiochip{chip}" if isinstance(chip, int) else ""


def load_pin_factory(name: str = "auto") -> LoadedFactory:
    """Load the named factory (``auto``: lgpio, then RPi.GPIO, then pigpio); raises
    BoardUnavailable with the cause and the fix."""
    if name not in FACTORY_NAMES:
        raise BoardUnavailable(f"unknown pin_factory {name!r}; use one of {', '.join(FACTORY_NAMES)}")
    if name != "auto":
        return _load(name)
    reasons: list[str] = []
    for candidate in AUTO_ORDER:
        try:
            loaded = _load(candidate)
        except BoardUnavailable as exc:
            reasons.append(str(exc))
            continue
        for reason in reasons:
            log.warning("pin_factory_skipped reason=%r", reason)
        return loaded
    # lgpio's reason is the one that matters: it is the factory every supported Pi should use
    raise BoardUnavailable(f"{reasons[0]} (pin_factory = \"auto\" also tried RPi.GPIO and pigpio)")


def private_lgpio_dir() -> str | None:
    """lgpio makes a notification FIFO with a fixed name in ``$LG_WD`` (else the current
    directory, which may be read-only or shared with another process) and changes into it.
    Unless ``LG_WD`` is set (the service sets its runtime directory), give this process a
    directory of its own; returns it so that the board can remove it when it closes."""
    if os.environ.get("LG_WD"):
        return None
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = runtime if runtime and os.access(runtime, os.W_OK | os.X_OK) else None
    path = tempfile.mkdtemp(prefix="edge-lgpio-", dir=base)
    os.environ["LG_WD"] = path
    return path


def _load(name: str) -> LoadedFactory:
    module_name, class_name = FACTORIES[name]
    workdir = private_lgpio_dir() if name == "lgpio" else None
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        _remove(workdir)
        missing = getattr(exc, "name", None) or str(exc)
        raise BoardUnavailable(f"pin factory {name} is not installed (cannot import {missing}): "
                               f"{INSTALL_HINT[name]}") from None
    try:
        factory = getattr(module, class_name)()
    except Exception as exc:  # noqa: BLE001 - every library raises its own; all become one error
        _remove(workdir)
        raise BoardUnavailable(_explain(name, exc)) from None
    info = factory.board_info
    return LoadedFactory(factory, name, describe_chip(factory), str(info.model),
                         str(info.revision), workdir)


def _remove(workdir: str | None) -> None:
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)
        if os.environ.get("LG_WD") == workdir:
            del os.environ["LG_WD"]


def _explain(name: str, exc: Exception) -> str:
    """Turn a factory's start-up failure into the cause and the fix."""
    if isinstance(exc, PinUnknownPi):
        return (f"pin factory {name}: this does not look like a Raspberry Pi (no board revision "
                "in /proc/device-tree/system/linux,revision or /proc/cpuinfo); on another "
                "machine set simulate = true to use mock pins")
    if name == "lgpio":
        chip = _lgpio_chip_path()
        problem = _device_problem(chip)
        if problem:
            return f"pin factory lgpio cannot open {chip}: {problem}"
    if name == "pigpio":
        return (f"pin factory pigpio cannot reach the pigpiod daemon ({exc}): start it with "
                "`sudo systemctl enable --now pigpiod`, or use pin_factory = \"lgpio\"")
    if name in ("rpigpio", "native") and not os.access("/dev/gpiomem", os.R_OK | os.W_OK):
        return (f"pin factory {name} cannot open /dev/gpiomem ({exc}): add the agent's user to "
                "the gpio group, or use pin_factory = \"lgpio\" (the service's sandbox only "
                "allows /dev/gpiochip*)")
    return f"pin factory {name} failed to start: {exc}"


def _lgpio_chip_path() -> str:
    """The chip LGPIOFactory opens: gpiochip4 on a Pi 5 with an older kernel, else gpiochip0."""
    try:  # gpiozero gives the revision code as an int (0xc04170 is a Pi 5 4GB: type 0x17)
        pi5 = (int(local_pins.get_pi_revision()) & 0xFF0) >> 4 == 0x17
    except Exception:  # noqa: BLE001 - no revision: not a Pi 5
        pi5 = False
    return "/dev/gpiochip4" if pi5 and os.path.exists("/dev/gpiochip4") else "/dev/gpiochip0"


def _device_problem(path: str) -> str:
    """Why ``path`` cannot be opened read-write, with the fix; '' if it can."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return ("no such device: the kernel's GPIO character device is missing (not a Pi, or "
                "a kernel without CONFIG_GPIO_CDEV); on another machine set simulate = true")
    except PermissionError:
        return (f"permission denied: add the agent's user to the gpio group (`sudo usermod -aG "
                f"gpio $USER`, then log in again or restart the service) and check that {path} "
                "is group gpio with mode 0660 (deploy/install.sh installs that udev rule)")
    except OSError as exc:
        return f"{os.strerror(exc.errno or errno.EIO)}"
    os.close(fd)
    return ""
