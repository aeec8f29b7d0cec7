"""The firmware images the package ships (edge/firmware_images) are what today's sources build:
firmware/build_images.py rebuilds every board from scratch, and a stale or damaged image fails
with the command that rebuilds it."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile

import pytest

from edge.cli.firmware_cmd import STM32_BOARDS
from edge.cli.shipped_firmware import IMAGES, shipped_image, shipped_images
from edge.core.exc import EdgeError
from tests.emulation.build import FIRMWARE
from tests.helpers import ROOT

BUILD_IMAGES = FIRMWARE / "build_images.py"


def load_build_images():
    spec = importlib.util.spec_from_file_location("build_images", BUILD_IMAGES)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every board's image, built from scratch from today's sources."""
    builder = load_build_images()
    return builder, builder.build_all(tmp_path_factory.mktemp("images"))


def test_the_shipped_images_are_bit_for_bit_what_the_sources_build():
    out = subprocess.run([sys.executable, str(BUILD_IMAGES), "--check"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "shipped firmware images match their sources"


def test_every_board_has_an_image_with_its_versions_and_checksums():
    images = shipped_images()
    assert sorted(images) == sorted(["uno", *STM32_BOARDS])
    assert images["uno"].firmware == "EdgeFirmata 2.5" and images["uno"].protocol == "firmata 2.5"
    assert {images[b].firmware for b in STM32_BOARDS} == {"1.0"}
    for image in images.values():
        assert image.verified().parent == IMAGES and len(image.source_sha256) == 64


def test_a_changed_source_makes_the_image_stale_with_the_command_to_rebuild(built, tmp_path,
                                                                             monkeypatch):
    builder, fresh = built
    shipped = tmp_path / "firmware_images"
    shutil.copytree(IMAGES, shipped)
    manifest = json.loads((shipped / "manifest.json").read_text())
    manifest["images"][0]["source_sha256"] = "0" * 64  # as if built from yesterday's sketch
    (shipped / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(builder, "SHIPPED", shipped)
    assert builder.check(fresh) == [
        "uno: source_sha256 differ from a build of today's sources; run "
        "`python firmware/build_images.py` and commit edge/firmware_images/"]


def test_a_damaged_image_is_caught_before_it_is_flashed(built, tmp_path, monkeypatch):
    builder, fresh = built
    shipped = tmp_path / "firmware_images"
    shutil.copytree(IMAGES, shipped)
    (shipped / "edge-blackpill_f411.bin").write_bytes(b"\xff" * 16)
    monkeypatch.setattr(builder, "SHIPPED", shipped)
    assert builder.check(fresh) == [
        "blackpill_f411: edge-blackpill_f411.bin does not match its manifest sha256; run "
        "`python firmware/build_images.py` and commit edge/firmware_images/"]
    monkeypatch.setattr("edge.cli.shipped_firmware.IMAGES", shipped)
    with pytest.raises(EdgeError, match="missing or damaged: reinstall"):
        shipped_image("blackpill_f411").verified()


def test_the_images_and_manifest_are_in_the_wheel(tmp_path):
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                          "-q", ".", "-w", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        inside = {name.removeprefix("edge/firmware_images/") for name in archive.namelist()
                  if name.startswith("edge/firmware_images/")}
    assert inside == {"manifest.json", *(image.path.name for image in shipped_images().values())}
