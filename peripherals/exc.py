"""Errors raised by board drivers; each message says what to do next.

Every error of this package is a :class:`BoardError` (``edge`` draws its own tree, of
``EdgeError``, in :mod:`edge.core.exc`; this package imports nothing from it). Drawn indented by
inheritance: ``Name(Builtin)`` when a builtin is mixed in, ``[module]`` when the class lives
elsewhere, then when it is raised::

    BoardError: a board or sensor failed; the message says what to do
        UnknownPin(LookupError): a pin name that is not on the board (or out of range)
        PinModeError: a pin asked for what its configured mode or its hardware cannot do
        BoardUnavailable: the board cannot be reached (unplugged, no permission, no driver)
        FirmwareError [peripherals.stm32]: the STM32 firmware refused a request (its error code)
        FrameError(ValueError) [peripherals.stm32_protocol]: a frame fails COBS, its CRC or layout
        SensorError: a reading failed or was implausible; the next read may succeed
            ImplausibleReading [peripherals.sensors.w1]: a DS18B20 scratchpad that cannot be trusted
            GarbledFrame [peripherals.sensors.dht22]: a DHT22 reply lost or out of range; tried again
            SensorUnavailable: a sensor cannot be used at all as set up; the message names the fix

A builtin is mixed in where a caller may fairly catch it (gpiozero's ``PinInvalidPin(PinError,
ValueError)``); the ``OSError`` family is left to the operating system's own errors.
"""


class BoardError(Exception):
    """Base class for every board-level failure."""


class UnknownPin(BoardError, LookupError):
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
