"""Errors raised by board drivers; each message says what to do next."""


class BoardError(Exception):
    """Base class for every board-level failure."""


class UnknownPin(BoardError):
    """A pin name that is not on the board (or out of range)."""


class PinModeError(BoardError):
    """A pin asked to do something its configured mode or hardware cannot do."""


class BoardUnavailable(BoardError):
    """The board cannot be reached (unplugged, no permission, no driver)."""


class SensorError(BoardError):
    """A sensor reading failed or was implausible (bad CRC, power-on value, no answer); the
    next read may succeed."""


class SensorUnavailable(SensorError):
    """A sensor cannot be used at all as set up (bus or driver not enabled, no permission, no
    such device, the wrong chip); the message names the fix."""
