"""The harness itself, against the real kernel: the guest's chip looks like a Pi 4's to lgpio
and gpiozero, sysfs shows what the lines are driven to, pulls move inputs, and the line
watcher catches a pulse of a few milliseconds.

Python in the guest is slow (0.6 s and more a process), so one lgpio process holds the lines
for the first three tests.
"""

from __future__ import annotations

import json
import signal
import textwrap
import time
from collections.abc import Iterator

import pytest

from tests.kernel.guest import PYTHON, GuestError, KernelGuest

HIGH_OUT, LOW_OUT, INPUT, PULSED = 17, 22, 27, 6

HOLDER = textwrap.dedent(f"""
    import json, signal, time, lgpio
    chip = lgpio.gpiochip_open(0)
    _, lines, name, label = lgpio.gpio_get_chip_info(chip)
    lgpio.gpio_claim_output(chip, {HIGH_OUT}, 1)
    lgpio.gpio_claim_output(chip, {LOW_OUT}, 0)
    lgpio.gpio_claim_input(chip, {INPUT})
    print(json.dumps({{"lines": lines, "name": name, "label": label}}), flush=True)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    last = None
    while not stopping:
        level = lgpio.gpio_read(chip, {INPUT})
        if level != last:
            print("input", level, flush=True)
            last = level
        time.sleep(0.01)
    lgpio.gpiochip_close(chip)
""")


def until(check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "timed out waiting for the guest"
        time.sleep(0.05)
    return value


def complete_line(text: str) -> str:
    """The first line of ``text`` once it is complete, else ''."""
    line, newline, _ = text.partition("\n")
    return line if newline else ""


@pytest.fixture(scope="module")
def holder(kernel_guest: KernelGuest) -> Iterator[dict]:
    """An lgpio process in the guest holding two outputs and an input; yields its chip info."""
    kernel_guest.set_pull(INPUT, "pull-down")
    kernel_guest.set_pull(LOW_OUT, "pull-up")  # so a low line is the driver's, not the pull's
    kernel_guest.spawn("holder", [str(PYTHON), "-c", HOLDER])
    yield json.loads(until(lambda: complete_line(kernel_guest.output("holder")[0])))
    kernel_guest.signal("holder", signal.SIGTERM)
    result = kernel_guest.wait("holder", timeout=30)
    kernel_guest.set_pull(LOW_OUT, "pull-down")
    assert result["rc"] == 0, result


def test_the_chip_is_gpiochip0_labelled_like_a_pi4_with_54_lines(holder):
    assert holder == {"lines": 54, "name": "gpiochip0", "label": "pinctrl-bcm2711"}


def test_an_output_claimed_by_lgpio_shows_its_driven_level_in_sysfs(kernel_guest, holder):
    assert kernel_guest.line_value(HIGH_OUT) == 1
    assert kernel_guest.line_value(LOW_OUT) == 0  # pulled up, driven low


def test_a_pull_moves_an_input_that_lgpio_reads(kernel_guest, holder):
    def inputs() -> list[str]:
        return [line for line in kernel_guest.output("holder")[0].splitlines()
                if line.startswith("input")]

    assert until(inputs) == ["input 0"]
    kernel_guest.set_pull(INPUT, "pull-up")
    assert until(lambda: inputs()[1:]) == ["input 1"]
    kernel_guest.set_pull(INPUT, "pull-down")
    assert until(lambda: inputs()[2:]) == ["input 0"]


def test_gpiozero_lgpio_factory_sees_a_pi_4b_and_drives_a_line(kernel_guest):
    script = textwrap.dedent(f"""
        from gpiozero import LED
        from gpiozero.pins.lgpio import LGPIOFactory
        factory = LGPIOFactory()
        led = LED({PULSED}, pin_factory=factory)
        led.on()
        with open({kernel_guest.value_path(PULSED)!r}) as value:
            level = int(value.read())
        info = factory.board_info
        print(info.model, info.revision, factory.chip, level)
        led.close()
        factory.close()
    """)
    result = kernel_guest.run([str(PYTHON), "-c", script])
    assert result["rc"] == 0, result
    assert result["stdout"].split() == ["4B", "c03114", "0", "1"]  # model, revision, chip, level


def test_the_line_watcher_catches_a_pulse_of_a_few_milliseconds(kernel_guest):
    pull = kernel_guest.pull_path(PULSED)
    kernel_guest.set_pull(PULSED, "pull-down")
    watch = kernel_guest.watch_lines([PULSED])
    pulse = kernel_guest.run(["sh", "-c", f"echo pull-up > {pull}; sleep 0.003;"
                                          f" echo pull-down > {pull}"])
    time.sleep(0.2)
    seen = watch.stop()
    assert pulse["rc"] == 0, pulse
    assert [(line, value) for _, line, value in seen] == [(PULSED, 0), (PULSED, 1), (PULSED, 0)]
    rise, fall = seen[1][0], seen[2][0]
    assert 0 < fall - rise < 1_000_000_000


def test_commands_run_as_another_user_time_out_and_fail_without_harm(kernel_guest):
    nobody = kernel_guest.run(["sh", "-c", "id -u; id -G; echo $LG_WD"], user=65534)
    uid, groups, lg_wd = nobody["stdout"].split()
    assert (nobody["rc"], uid, groups) == (0, "65534", "65534")
    assert lg_wd.startswith("/run/lgpio/")  # a fresh one for each process
    slow = kernel_guest.run(["sleep", "30"], timeout=0.5)
    assert slow["rc"] is None and slow["timed_out"]
    with pytest.raises(GuestError, match="FileNotFoundError"):
        kernel_guest.run(["/no/such/program"])
    assert kernel_guest.request("ping") == {"pong": True}

