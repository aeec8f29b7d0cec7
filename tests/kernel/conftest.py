"""One QEMU guest with a gpio-sim chip for the whole session; every test here is ``kernel``.

Nothing is skipped: without qemu, the kernel or the network the tests fail and say why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kernel.guest import KernelGuest
from tests.kernel.image import Image, prepare

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.kernel)


@pytest.fixture(scope="session")
def kernel_image() -> Image:
    """The trixie-backports kernel, initramfs and line watcher (cached in build/kernel-gpio)."""
    return prepare()


@pytest.fixture(scope="session")
def kernel_guest(kernel_image: Image, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[KernelGuest]:
    """The booted guest, shared by every kernel test; powered off at the end of the session."""
    guest = KernelGuest(kernel_image, tmp_path_factory.mktemp("kernel-guest"))
    guest.boot()
    yield guest
    guest.shutdown()


@pytest.fixture(autouse=True)
def _no_line_watch_outlives_its_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that fails between watch_lines and stop would leave linewatch spinning."""
    yield
    guest = request.node.funcargs.get("kernel_guest")
    if isinstance(guest, KernelGuest):
        guest.stop_watches()
