"""What each sensor type yields and where it answers: the small tables that config validation
needs, on a floor below the drivers so that reading a config file does not import them.

>>> BME280_UNITS["pressure"], [hex(a) for a in BME280_ADDRESSES]
('hPa', ['0x76', '0x77'])
"""

from __future__ import annotations

PI_THROTTLE_BITS = {
    "under_voltage": 0, "freq_capped": 1, "throttled": 2, "soft_temp_limit": 3,
    "under_voltage_occurred": 16, "freq_capped_occurred": 17, "throttled_occurred": 18,
    "soft_temp_limit_occurred": 19,
}
"""Flag -> bit of the Pi's get_throttled. ``freq_capped`` is the ARM frequency cap, ``soft_temp_limit``
the soft temperature limit (60 °C by default on a Pi 3B+); ``*_occurred`` stay set until
reboot. Each flag reads 1 or 0."""

PI_HEALTH_UNITS: dict[str, str] = {
    "cpu_temperature": "°C",
    **{flag: "" for flag in PI_THROTTLE_BITS},
    "load_1m": "", "load_5m": "", "load_15m": "",
    "disk_used": "%",
    "memory_used": "%",
}

DS18B20_UNITS = {"temperature": "°C"}

BME280_ADDRESSES = (0x76, 0x77)
"""0x76 with SDO to GND (most breakout boards), 0x77 with SDO to 3.3 V."""
BME280_UNITS = {"temperature": "°C", "pressure": "hPa", "humidity": "%"}

ADS1115_ADDRESSES = (0x48, 0x49, 0x4A, 0x4B)
"""ADDR pin to GND, VDD, SDA, SCL."""
ADS1115_GAINS = {6.144: 0b000, 4.096: 0b001, 2.048: 0b010, 1.024: 0b011, 0.512: 0b100, 0.256: 0b101}
"""Full-scale range in volts -> PGA bits. Inputs never go beyond VDD + 0.3 V whatever the FSR."""
