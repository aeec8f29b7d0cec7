"""Errors raised by board drivers; each message says what to do next."""


class BoardError(Exception):
    """Base class for every board-level failure."""


class UnknownPin(BoardError):
    """A pin name that is not on the board (or out of range)."""


class PinModeError(BoardError):
    """A pin asked to do something its configured mode or hardware cannot do."""


class BoardUnavailable(BoardError):
    """The board cannot be reached (unplugged, no permission, no driver)."""
