"""The manual builds: ``mkdocs build --strict`` (mkdocs.yml: every page in the nav, no link to a
missing page or anchor) succeeds on the committed docs/, and fails on a broken link."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests.helpers import ROOT


def build(root, site) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
                           "-d", str(site)], capture_output=True, text=True, env=env, cwd=root)


def test_the_site_builds_strictly(tmp_path):
    out = build(ROOT, tmp_path / "site")
    assert out.returncode == 0, out.stderr
    for page in ("index.html", "tutorials/first-relay/index.html", "safety/before-you-wire-mains/index.html",
                 "reference/configuration/index.html", "developers/benchmarks/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    assert "greenhouse.md" not in (tmp_path / "site" / "index.html").read_text()  # links became pages


def test_a_broken_anchor_fails_the_build(tmp_path):
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    page = tmp_path / "docs" / "tutorials" / "first-relay.md"
    page.write_text(page.read_text() + "\nSee [the wiring](greenhouse.md#no-such-heading).\n")
    out = build(tmp_path, tmp_path / "site")
    assert out.returncode != 0
    assert "no-such-heading" in out.stderr
