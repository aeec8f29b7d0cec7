"""Board latency, each figure next to the wire time of its bytes at the configured baud rate:
a Firmata digital write from the arduino driver to the pin edge simavr reports, and a request
round trip of our protocol with the STM32 firmware in qemu (qemu's UART ignores the baud rate,
so there the wire time is what a real board at 115200 would add)."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from peripherals import stm32_protocol as wire
from peripherals.arduino import ArduinoBoard
from peripherals.base import PinMode
from peripherals.stm32 import Stm32Board
from tests.emulation.build import arduino_elf, avr_emulator, stm32_elf
from tests.emulation.qemu import QemuStm32
from tests.emulation.simavr import SimAvr

WRITES = 40
REQUESTS = 300


def wire_ms(nbytes: int, baud: int) -> float:
    return nbytes * 10 / baud * 1000  # 8N1: ten bits a byte


def summary(label: str, samples: list[float], wire: float) -> None:
    samples = sorted(samples)
    p90 = samples[int(len(samples) * 0.9) - 1]
    print(f"{label:<44} median {statistics.median(samples):6.2f} ms  p90 {p90:6.2f} ms  "
          f"wire {wire:5.2f} ms  (n={len(samples)})")


async def firmata_write_to_edge(workdir: Path) -> None:
    sim = SimAvr(avr_emulator(), arduino_elf(), workdir)
    sim.start()
    board = ArduinoBoard("uno", str(sim.link), watchdog_ms=0)
    try:
        await board.connect()
        await board.setup_pin("D13", PinMode.OUTPUT)
        samples = []
        for i in range(WRITES):
            level = (i + 1) % 2
            seen = len(sim.levels("D13"))
            start = time.monotonic()
            await board.write("D13", bool(level))
            edge_at = sim.wait_edge("D13", level, after=seen)
            samples.append((edge_at - start) * 1000)
            await asyncio.sleep(0.01)
        summary("firmata write -> pin edge (simavr, 57600)", samples, wire_ms(3, 57600))
    finally:
        await board.close()
        sim.stop()


async def protocol_round_trip(workdir: Path) -> None:
    qemu = QemuStm32(stm32_elf("netduinoplus2"), workdir)
    qemu.start()
    board = Stm32Board("st", qemu.url, watchdog_ms=0)
    try:
        await board.connect()
        await board.setup_pin("PA5", PinMode.OUTPUT)
        for label, cmd, fields in (("ping", wire.Cmd.PING, {}),
                                   ("digital_write", wire.Cmd.DIGITAL_WRITE, {"pin": 5, "level": 1})):
            request = len(wire.encode_request(cmd, 1, **fields))
            reply = len(wire.encode_frame(bytes(2 + sum(1 for _ in fields))))
            samples = []
            for _ in range(REQUESTS):
                start = time.perf_counter()
                await asyncio.to_thread(board._request, cmd, **fields)
                samples.append((time.perf_counter() - start) * 1000)
            summary(f"protocol {label} round trip (qemu, {request}+{reply} B)", samples,
                    wire_ms(request + reply, 115200))
    finally:
        await board.close()
        qemu.stop()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(firmata_write_to_edge(Path(tmp)))
        asyncio.run(protocol_round_trip(Path(tmp)))


if __name__ == "__main__":
    main()
