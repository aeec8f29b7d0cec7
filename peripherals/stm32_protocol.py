"""The host side of the edge-agent board protocol (``firmware/PROTOCOL.md``), without I/O.

Frames are COBS-encoded and end in a zero byte; the decoded bytes are
``type, id, body..., crc16`` with CRC-16/CCITT-FALSE (big-endian) over everything before it.
The same rules are compiled into the firmware core (``firmware/stm32/core``); the shared
conformance vectors (``firmware/conformance/vectors.txt``) keep the two from drifting.

>>> frame = encode_request(Cmd.DIGITAL_WRITE, 7, pin=5, level=1)
>>> frame.hex(" ")
'07 03 07 05 01 75 58 00'
>>> reader = FrameReader()
>>> [message.fields for message in reader.feed(encode_frame(bytes([0x83, 7, 5, 1])))]
[{'pin': 5, 'level': 1}]
"""

from __future__ import annotations

import binascii
import enum
import struct
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from peripherals.exc import BoardError

PROTOCOL_VERSION = 1
MAX_FRAME = 96
"""Largest decoded frame (type + id + body + crc) either side accepts."""

REPLY_BIT = 0x80
ERROR_TYPE = 0x7F


class Cmd(enum.IntEnum):
    HELLO = 0x01
    PIN_MODE = 0x02
    DIGITAL_WRITE = 0x03
    DIGITAL_READ = 0x04
    PWM_WRITE = 0x05
    ADC_READ = 0x06
    WATCHDOG = 0x07
    SAFE_STATE = 0x08
    SUBSCRIBE = 0x09
    PING = 0x0A
    STATS = 0x0B


class Event(enum.IntEnum):
    INPUT_CHANGED = 0x40
    WATCHDOG_TRIPPED = 0x41


class Mode(enum.IntEnum):
    INPUT = 0
    INPUT_PULLUP = 1
    INPUT_PULLDOWN = 2
    OUTPUT = 3
    PWM = 4
    ANALOG = 5


class Caps(enum.IntFlag):
    DIGITAL_IN = 1
    DIGITAL_OUT = 2
    PWM = 4
    ANALOG = 8


class ErrorCode(enum.IntEnum):
    UNKNOWN_COMMAND = 1
    BAD_LENGTH = 2
    BAD_PIN = 3
    MODE_UNSUPPORTED = 4
    WRONG_MODE = 5
    BAD_VALUE = 6
    TOO_MANY = 7
    VERSION_MISMATCH = 8


BOARD_IDS = {1: "nucleo-f401re", 2: "nucleo-f411re", 3: "blackpill-f411", 4: "netduinoplus2-f405",
             0xFE: "host-sim"}

# Fixed fields per message body, as (name, struct code); "pairs" marks a trailing list of
# (pin, value) byte pairs whose length comes from the frame length.
Layout: TypeAlias = tuple[tuple[str, str] | Literal["pairs"], ...]
Fields: TypeAlias = dict[str, Any]
"""A message's fields by name: ints, and ``pairs`` as a list of (pin, value) tuples."""

REQUESTS: dict[Cmd, Layout] = {
    Cmd.HELLO: (("version", "B"),),
    Cmd.PIN_MODE: (("pin", "B"), ("mode", "B")),
    Cmd.DIGITAL_WRITE: (("pin", "B"), ("level", "B")),
    Cmd.DIGITAL_READ: (("pin", "B"),),
    Cmd.PWM_WRITE: (("pin", "B"), ("duty", "H"), ("frequency", "H")),
    Cmd.ADC_READ: (("pin", "B"),),
    Cmd.WATCHDOG: (("timeout_ms", "H"),),
    Cmd.SAFE_STATE: ("pairs",),
    Cmd.SUBSCRIBE: (("pin", "B"), ("on", "B")),
    Cmd.PING: (),
    Cmd.STATS: (),
}
REPLIES: dict[int, Layout] = {
    Cmd.HELLO | REPLY_BIT: (("protocol", "B"), ("fw_major", "B"), ("fw_minor", "B"),
                            ("board", "B"), "pairs"),
    Cmd.PIN_MODE | REPLY_BIT: (("pin", "B"), ("mode", "B")),
    Cmd.DIGITAL_WRITE | REPLY_BIT: (("pin", "B"), ("level", "B")),
    Cmd.DIGITAL_READ | REPLY_BIT: (("pin", "B"), ("level", "B")),
    Cmd.PWM_WRITE | REPLY_BIT: (("pin", "B"), ("duty", "H")),
    Cmd.ADC_READ | REPLY_BIT: (("pin", "B"), ("raw", "H")),
    Cmd.WATCHDOG | REPLY_BIT: (("timeout_ms", "H"),),
    Cmd.SAFE_STATE | REPLY_BIT: (("count", "B"),),
    Cmd.SUBSCRIBE | REPLY_BIT: (("pin", "B"), ("on", "B"), ("level", "B")),
    Cmd.PING | REPLY_BIT: (),
    Cmd.STATS | REPLY_BIT: (("rx_frames", "H"), ("bad_frames", "H"), ("watchdog_trips", "H")),
    ERROR_TYPE: (("command", "B"), ("code", "B")),
    Event.INPUT_CHANGED: (("pin", "B"), ("level", "B")),
    Event.WATCHDOG_TRIPPED: (),
}


class FrameError(BoardError, ValueError):
    """A frame that fails COBS decoding, its CRC, or its message layout."""


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection (the standard library's
    CRC-CCITT, in C).

    >>> hex(crc16(b"123456789"))  # the catalogue's check value
    '0x29b1'
    """
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    out = bytearray()
    block = bytearray()
    for byte in data:
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
            continue
        block.append(byte)
        if len(block) == 254:
            out.append(255)
            out += block
            block.clear()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    out = bytearray()
    i, end = 0, len(data)
    while i < end:
        code = data[i]
        if code == 0 or i + code > end:
            raise FrameError("bad COBS block")
        out += data[i + 1:i + code]
        i += code
        if code < 255 and i < end:
            out.append(0)
    return bytes(out)


def encode_frame(payload: bytes) -> bytes:
    return cobs_encode(payload + crc16(payload).to_bytes(2, "big")) + b"\x00"


def decode_frame(body: bytes) -> bytes:
    """The payload of one frame given without its zero delimiter; raises FrameError."""
    raw = cobs_decode(body)
    if len(raw) < 4 or len(raw) > MAX_FRAME:
        raise FrameError(f"frame of {len(raw)} bytes (4..{MAX_FRAME})")
    if crc16(raw[:-2]) != int.from_bytes(raw[-2:], "big"):
        raise FrameError("CRC mismatch")
    return raw[:-2]


def pack_body(layout: Layout, fields: Fields) -> bytes:
    out = bytearray()
    for item in layout:
        if item == "pairs":
            for pin, value in fields.get("pairs", ()):
                out += bytes((pin, value))
        else:
            name, code = item
            out += struct.pack(">" + code, fields[name])
    return bytes(out)


def unpack_body(layout: Layout, body: bytes) -> Fields:
    fields: Fields = {}
    offset = 0
    for item in layout:
        if item == "pairs":
            rest = body[offset:]
            if len(rest) % 2:
                raise FrameError("odd length pin list")
            fields["pairs"] = [(rest[i], rest[i + 1]) for i in range(0, len(rest), 2)]
            offset = len(body)
            continue
        name, code = item
        size = struct.calcsize(">" + code)
        if offset + size > len(body):
            raise FrameError("body too short")
        (fields[name],) = struct.unpack_from(">" + code, body, offset)
        offset += size
    if offset != len(body):
        raise FrameError("body too long")
    return fields


def encode_request(cmd: Cmd, request_id: int, **fields: Any) -> bytes:
    """One wire frame (with delimiter) for ``cmd``."""
    return encode_frame(bytes((cmd, request_id & 0xFF)) + pack_body(REQUESTS[Cmd(cmd)], fields))


@dataclass
class Message:
    """A decoded frame: a reply (``type`` has the reply bit), an error, or an event."""

    type: int
    id: int
    fields: Fields = field(default_factory=dict)

    @property
    def is_event(self) -> bool:
        return self.type in (Event.INPUT_CHANGED, Event.WATCHDOG_TRIPPED)

    @property
    def is_error(self) -> bool:
        return self.type == ERROR_TYPE


def parse_message(payload: bytes, layouts: dict[int, Layout] | None = None) -> Message:
    layouts = REPLIES if layouts is None else layouts
    kind, ident, body = payload[0], payload[1], payload[2:]
    if kind not in layouts:
        raise FrameError(f"unknown message type 0x{kind:02x}")
    return Message(kind, ident, unpack_body(layouts[kind], body))


class FrameReader:
    """Splits a byte stream into messages; bad frames are counted and dropped, garbage before a
    delimiter is skipped, so the reader resynchronises at the next zero byte."""

    def __init__(self, layouts: dict[int, Layout] | None = None) -> None:
        self._buffer = bytearray()
        self._overflow = False
        self.layouts = REPLIES if layouts is None else layouts
        self.bad_frames = 0

    def feed(self, data: bytes) -> list[Message]:
        messages = []
        for byte in data:
            if byte:
                if len(self._buffer) > MAX_FRAME + 2:
                    self._overflow = True
                else:
                    self._buffer.append(byte)
                continue
            chunk, overflow = bytes(self._buffer), self._overflow
            self._buffer.clear()
            self._overflow = False
            if not chunk and not overflow:
                continue  # an empty frame: a resync byte
            try:
                if overflow:
                    raise FrameError("frame too long")
                messages.append(parse_message(decode_frame(chunk), self.layouts))
            except FrameError:
                self.bad_frames += 1
        return messages


def pin_name(number: int) -> str:
    """``PA5`` for 5, ``PC13`` for 45: port letter from the high bits, 16 pins per port."""
    return f"P{chr(ord('A') + number // 16)}{number % 16}"


def pin_number(name: str) -> int:
    text = name.strip().upper()
    if len(text) < 3 or text[0] != "P" or not "A" <= text[1] <= "K" or not text[2:].isdigit():
        raise ValueError(f"{name!r} is not an STM32 pin name like PA5 or PC13")
    index = int(text[2:])
    if index > 15:
        raise ValueError(f"{name!r}: ports have pins 0..15")
    return (ord(text[1]) - ord("A")) * 16 + index
