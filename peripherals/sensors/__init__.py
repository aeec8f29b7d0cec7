"""Sensor drivers: things the agent reads but never drives (1-Wire and I2C chips, SPI ADCs,
the Pi's own health), behind the :class:`peripherals.sensors.base.Sensor` protocol and built
from config by :func:`peripherals.sensors.factory.create_sensor`.

>>> from peripherals.sensors.bme280 import Bme280Sensor
>>> Bme280Sensor("greenhouse", bus=1, address=0x76).quantities
('temperature', 'pressure', 'humidity')
"""
