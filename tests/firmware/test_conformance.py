"""The shared conformance vectors hold for both sides of the protocol: the firmware core compiled
for the host (firmware/stm32/host/vector_check.c) and the Python codec the driver uses."""

from __future__ import annotations

import re

import pytest

from peripherals import stm32_protocol as wire
from tests.emulation.build import FIRMWARE, make

VECTORS = FIRMWARE / "conformance" / "vectors.txt"
SPECIAL = {"error": wire.ERROR_TYPE, "input_changed": wire.Event.INPUT_CHANGED,
           "watchdog_tripped": wire.Event.WATCHDOG_TRIPPED}


def parse_fields(words: list[str]) -> dict:
    fields = {}
    for word in words:
        key, value = word.split("=")
        if key == "pairs":
            fields[key] = [tuple(int(x) for x in pair.split(":")) for pair in value.split(",")]
        else:
            fields[key] = int(value)
    return fields


def messages(direction: str) -> list[tuple[str, int, dict, bytes]]:
    found = []
    for line in VECTORS.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line.startswith(direction + " ") or line.startswith(f"{direction} raw"):
            continue
        symbolic, wire_hex = line.split("|")
        name, ident, *rest = symbolic.split()[1:]
        found.append((name, int(ident), parse_fields(rest), bytes.fromhex(wire_hex)))
    return found


def test_host_compiled_firmware_core_passes_every_case():
    cases = len(re.findall(r"^case ", VECTORS.read_text(), re.M))
    output = make(FIRMWARE / "stm32", "check")
    assert f"{cases} passed, 0 failed" in output
    assert cases >= 15


@pytest.mark.parametrize("name,ident,fields,frame", messages("send"),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_python_encodes_requests_byte_for_byte(name, ident, fields, frame):
    assert wire.encode_request(wire.Cmd[name.upper()], ident, **fields) == frame


@pytest.mark.parametrize("name,ident,fields,frame", messages("recv"),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_python_decodes_firmware_frames(name, ident, fields, frame):
    reader = wire.FrameReader()
    (message,) = reader.feed(frame)
    expected_type = SPECIAL.get(name, None)
    if expected_type is None:
        expected_type = wire.Cmd[name.upper()] | wire.REPLY_BIT
    assert (message.type, message.id, message.fields) == (expected_type, ident, fields)
    assert reader.bad_frames == 0


def test_reader_drops_bad_frames_and_resynchronises():
    good = wire.encode_frame(bytes([wire.Cmd.PING | wire.REPLY_BIT, 9]))
    corrupt = bytearray(good)
    corrupt[1] ^= 0x40
    reader = wire.FrameReader()
    got = reader.feed(b"\x01\x02noise\x00" + bytes(corrupt) + b"\xff" * 300 + b"\x00" + good)
    assert [(m.type, m.id) for m in got] == [(0x8A, 9)]
    assert reader.bad_frames == 3


def test_crc_is_ccitt_false():
    assert wire.crc16(b"123456789") == 0x29B1
