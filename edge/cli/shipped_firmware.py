"""The firmware images this package ships (``edge/firmware_images/``), built by
``firmware/build_images.py``, so an installed agent flashes with only avrdude, stm32flash or st-flash.

>>> image = shipped_image("uno")
>>> image.firmware, image.path.name
('EdgeFirmata 2.5', 'edge_firmata-uno.hex')
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from edge.core.exc import EdgeError

IMAGES = Path(__file__).resolve().parents[1] / "firmware_images"


@dataclass(frozen=True)
class ShippedImage:
    board: str
    """``uno`` or an STM32 board (``nucleo_f401re``...)."""
    path: Path
    firmware: str
    """What the board's handshake reports once flashed: ``EdgeFirmata 2.5``, ``1.0``."""
    protocol: str
    sha256: str
    source_sha256: str

    def verified(self) -> Path:
        """The image's path once its bytes match the manifest's sha256."""
        if not self.path.exists() or hashlib.sha256(self.path.read_bytes()).hexdigest() != self.sha256:
            raise EdgeError(f"the shipped image {self.path} is missing or damaged: reinstall "
                            "edge-agent, or build from a checkout with `edge-cli firmware flash --build`")
        return self.path


def shipped_images() -> dict[str, ShippedImage]:
    """Board name -> its image, from the manifest."""
    manifest = json.loads((IMAGES / "manifest.json").read_text())
    return {item["board"]: ShippedImage(item["board"], IMAGES / item["file"], item["firmware"],
                                        item["protocol"], item["sha256"], item["source_sha256"])
            for item in manifest["images"]}


def shipped_image(board: str) -> ShippedImage:
    images = shipped_images()
    if board not in images:
        raise EdgeError(f"no shipped firmware image for {board!r} (shipped: {', '.join(images)})")
    return images[board]


def version_tuple(text: str) -> tuple[int, ...]:
    found = re.search(r"(\d+(?:\.\d+)*)", text)
    return tuple(int(part) for part in found.group(1).split(".")) if found else ()


STM32_IMAGES = {"nucleo-f401re": "nucleo_f401re", "nucleo-f411re": "nucleo_f411re",
                "blackpill-f411": "blackpill_f411", "netduinoplus2-f405": "netduinoplus2"}
"""The board an STM32's handshake names -> its shipped image."""


def firmware_verdict(kind: str, info: dict[str, str]) -> dict[str, str | None] | None:
    """What a connected board's handshake reported (its status ``info``: ``firmware``, and an
    STM32's ``board``) against the shipped image: ``reported``, ``shipped``, ``verdict``
    (``current``, ``older``, ``stock``, ``newer``) and ``update``, the one command that updates
    it (None when nothing to do); None for a board no image is shipped for."""
    reported = info.get("firmware", "")
    if kind == "arduino":
        image, update = shipped_image("uno"), "edge-cli firmware flash arduino"
    elif kind == "stm32" and info.get("board") in STM32_IMAGES:
        board = STM32_IMAGES[info["board"]]
        image, update = shipped_image(board), f"edge-cli firmware flash stm32 --board {board}"
    else:
        return None
    have, shipped = version_tuple(reported), version_tuple(image.firmware)
    if kind == "arduino" and not reported.startswith("EdgeFirmata"):
        verdict = "stock"
    else:
        verdict = "older" if have < shipped else "newer" if have > shipped else "current"
    return {"reported": reported, "shipped": image.firmware, "verdict": verdict,
            "update": update if verdict in ("stock", "older") else None}
