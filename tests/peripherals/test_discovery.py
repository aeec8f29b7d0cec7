"""USB ids name the adapter and the protocol to try first."""

from __future__ import annotations

import pytest

from peripherals.discovery import identify


@pytest.mark.parametrize("vid,pid,adapter,likely", [
    (0x2341, 0x0043, "Arduino", "arduino"),      # Uno R3: any Arduino product id
    (0x1A86, 0x7523, "CH340 USB serial", "arduino"),
    (0x10C4, 0xEA60, "CP210x USB serial", "arduino"),
    (0x0403, 0x6001, "FTDI FT232R", "arduino"),
    (0x0483, 0x374B, "ST-Link/V2-1", "stm32"),   # Nucleo-F401RE/F411RE virtual COM port
    (0x1234, 0x5678, "unknown", None),
    (None, None, "unknown", None),               # a pty or socket given with --port
])
def test_usb_ids(vid, pid, adapter, likely):
    found = identify("/dev/ttyACM0", vid, pid)
    assert (found.adapter, found.likely) == (adapter, likely)
    assert found.as_dict()["vid"] == (f"{vid:04x}" if vid is not None else None)
