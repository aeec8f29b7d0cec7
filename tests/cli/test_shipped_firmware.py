"""What ``edge-cli boards`` says of a board's firmware against the shipped image: stock Firmata,
an older or newer version of ours, or the current one, with the one command that updates it."""

from __future__ import annotations

from edge.cli.shipped_firmware import firmware_verdict


def test_stock_firmata_is_told_to_flash_ours():
    assert firmware_verdict("arduino", {"firmware": "StandardFirmata.ino 2.4"}) == {
        "reported": "StandardFirmata.ino 2.4", "shipped": "EdgeFirmata 2.5", "verdict": "stock",
        "update": "edge-cli firmware flash arduino"}


def test_an_older_version_of_ours_is_told_the_update_and_a_current_one_nothing():
    assert firmware_verdict("arduino", {"firmware": "EdgeFirmata 2.4"})["verdict"] == "older"
    older = firmware_verdict("stm32", {"firmware": "0.9", "board": "nucleo-f401re"})
    assert older == {"reported": "0.9", "shipped": "1.0", "verdict": "older",
                     "update": "edge-cli firmware flash stm32 --board nucleo_f401re"}
    current = firmware_verdict("stm32", {"firmware": "1.0", "board": "blackpill-f411"})
    assert current["verdict"] == "current" and current["update"] is None
    newer = firmware_verdict("arduino", {"firmware": "EdgeFirmata 2.10"})
    assert newer["verdict"] == "newer" and newer["update"] is None  # 2.10 is after 2.5


def test_a_board_no_image_is_shipped_for_gets_no_verdict():
    assert firmware_verdict("stm32", {"firmware": "1.0", "board": "host-sim"}) is None
    assert firmware_verdict("gpio", {"firmware": "1.0"}) is None
