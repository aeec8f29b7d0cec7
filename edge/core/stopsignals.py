"""Which signals end the agent (and a one-shot ``--hold``), and how. Every signal whose default
action ends the process either stops it through the safe state or is ignored; what cannot be
caught is left to ``ExecStopPost=edge-cli safe-state`` and the firmware watchdogs.

- :data:`ASKED_TO_STOP`: SIGTERM (systemd), SIGINT (Ctrl-C), SIGHUP (a dropped SSH session: it
  ends the run, there is no reload), SIGQUIT (Ctrl-\\). Outputs to their safe levels, exit 0.
- :data:`UNEXPECTED`: SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGXCPU,
  SIGSTKFLT and the real-time signals. Nobody stops the agent with these on purpose, but by
  default each would end it with its outputs as they are. The agent stops the same way, logs the
  signal, and exits 128 + its number, so that systemd (``Restart=on-failure``) starts it again
  as it would have after the signal killed it.
- :data:`IGNORED`: SIGPIPE and SIGXFSZ. Python ignores them from start-up: the write that
  caused one fails with an exception (BrokenPipeError, OSError EFBIG) where it is handled.
- Not caught: SIGKILL and SIGSTOP (nothing can), and the faults SIGSEGV, SIGBUS, SIGFPE, SIGILL,
  SIGABRT, SIGTRAP and SIGSYS: the process itself is broken and no Python code runs safely after
  one (systemd's watchdog sends SIGABRT to a hung agent, whose loop could not run the safe state
  anyway). After these, the service's ``ExecStopPost=edge-cli safe-state`` drives the Pi
  header's outputs to their safe levels, and the Arduino and STM32 firmware watchdogs do it on
  their boards.

>>> signal_name(signal.SIGUSR1), signal_name(signal.SIGRTMIN + 2)
('SIGUSR1', 'SIGRTMIN+2')
>>> exit_code(signal.SIGTERM), exit_code(signal.SIGUSR1)
(0, 138)
"""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Sequence

ASKED_TO_STOP: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)

_UNEXPECTED_NAMES = ("SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGIO", "SIGPWR",
                     "SIGXCPU", "SIGSTKFLT")
UNEXPECTED: tuple[int, ...] = (
    *(int(getattr(signal, name)) for name in _UNEXPECTED_NAMES if hasattr(signal, name)),
    *range(signal.SIGRTMIN, signal.SIGRTMAX + 1),
)

STOPPING: tuple[int, ...] = ASKED_TO_STOP + UNEXPECTED
"""Every signal that stops the agent, or ends a ``--hold``, through the safe state."""

IGNORED: tuple[int, ...] = (signal.SIGPIPE, signal.SIGXFSZ)

NOT_CAUGHT: tuple[int, ...] = (signal.SIGKILL, signal.SIGSTOP, signal.SIGSEGV, signal.SIGBUS,
                               signal.SIGFPE, signal.SIGILL, signal.SIGABRT, signal.SIGTRAP,
                               signal.SIGSYS)


def signal_name(signum: int) -> str:
    """``SIGUSR1``; real-time signals as ``SIGRTMIN+N``."""
    if signal.SIGRTMIN < signum <= signal.SIGRTMAX:
        return f"SIGRTMIN+{signum - signal.SIGRTMIN}"
    return signal.Signals(signum).name


def exit_code(signum: int) -> int:
    """What the agent exits with after stopping on ``signum``: 0 when asked to stop, else
    128 + the signal's number (the shell's convention for "ended by a signal")."""
    return 0 if signum in ASKED_TO_STOP else 128 + signum


def catch(loop: asyncio.AbstractEventLoop, signals: Sequence[int],
          callback: Callable[[int], object]) -> Callable[[], None]:
    """Call ``callback(signum)`` on ``loop`` when one of ``signals`` arrives; returns what puts
    their handlers back.

    The signals asked to stop (else the first) go through ``loop.add_signal_handler``, which
    points the interpreter's wake-up fd at the loop, so that any signal wakes it, even one the
    kernel delivers to a worker thread. The others get a plain handler that hands the signal to
    the loop (:meth:`~asyncio.loop.call_soon_threadsafe`), without interrupting system calls, as
    asyncio does: asyncio checks each signal against ``signal.valid_signals()``, a set it builds
    anew each time, which for the 40 unexpected signals cost about 5 ms of every start and stop."""
    through_loop = [s for s in signals if s in ASKED_TO_STOP] or list(signals[:1])
    plain = [s for s in signals if s not in through_loop]

    def hand_over(signum: int, frame: object) -> None:
        loop.call_soon_threadsafe(callback, signum)

    for signum in through_loop:
        loop.add_signal_handler(signum, callback, signum)
    previous = {signum: signal.signal(signum, hand_over) for signum in plain}
    for signum in plain:
        signal.siginterrupt(signum, False)

    def restore() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in through_loop:
            loop.remove_signal_handler(signum)

    return restore
