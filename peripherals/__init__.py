"""Board drivers for edge-agent.

This package knows nothing about agents, channels or models: it turns pin names into pins and
pins into electrical states, behind the :class:`peripherals.base.Board` protocol.

>>> from peripherals.gpio import GpioBoard
>>> board = GpioBoard("gpio", simulate=True, aliases={"led": "GPIO17"})
>>> board.resolve("led")
'GPIO17'
"""
