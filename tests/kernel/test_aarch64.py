"""The aarch64 pin factory on a real kernel GPIO chip: Debian's arm64 kernel in qemu-system-aarch64
(virt machine, TCG, Cortex-A72 like a Pi 4's) with gpio-sim, the 64-bit Pi OS userspace as its
root, and the agent from the checkout with the aarch64 lgpio wheel. One `edge-cli run`
(simulate = false) as the user pi: its outputs start safe, a button pressed through gpio-sim's
pull fires a rule that drives two outputs, and SIGTERM drives them safe before the lines are
released, as the kernel's own gpio trace events record. The guest runs once for the module
(guest_aarch64.sh); each test reads what it left."""

from __future__ import annotations

import re

import pytest

from tests.kernel.aarch64 import Aarch64Error, Run, prepare_root, run_scenario
from tests.kernel.agent import AGENT_CONFIG, BUTTON, HOME, LED, RELAY
from tests.kernel.image import prepare

# the amd64 guest's agent config (its aliases and pins), and a rule on the button
CONFIG = AGENT_CONFIG + """
[[rules]]
name = "button-lights"
when = "button pressed"
then = ["gpio write led on", "gpio write relay on"]
"""
WAIT = 120  # seconds the guest allows each step (the agent's start, 20 s or so, is the long one)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    image = prepare(arch="arm64")
    root = prepare_root()
    env = {"EDGE_HOME": HOME, "LED": str(LED), "RELAY": str(RELAY), "BUTTON": str(BUTTON),
           "WAIT": str(WAIT)}
    done = run_scenario(image, root, tmp_path_factory.mktemp("aarch64-guest"), CONFIG, env,
                        timeout=3 * WAIT + 120)
    if done.rc is None:
        raise Aarch64Error(f"the aarch64 guest did not finish its script in {done.seconds:.0f} s"
                           f" (results so far: {done.results})\n{done.diagnostics()}")
    if done.rc != 0:
        raise Aarch64Error(f"the aarch64 guest's script failed: {done.results.get('failed')}"
                           f" (results so far: {done.results})\n{done.diagnostics()}")
    return done


def traced(run: Run, line: int) -> list[str]:
    """What the kernel's gpio trace events show for a BCM line from the SIGTERM on, in order:
    ``set 0`` (driven low), ``get 1`` (read back), ``in`` (released to an input)."""
    number = int(run.results["base"]) + line
    trace = (run.workdir / "mailbox" / "trace.txt").read_text()
    return [f"{kind} {value}".strip() for kind, value in
            re.findall(rf"gpio_(?:value|direction): {number} +(set|get|in|out)(?: (\d))?", trace)]


def test_the_agent_runs_on_aarch64_with_lgpio_on_the_header_at_gpiochip0(run: Run) -> None:
    assert run.results["machine"] == "aarch64"
    assert run.results["chip"] == "gpiochip0"  # gpio-sim's, the virt machine's own unbound
    err = run.log("agent.err")
    assert "Traceback" not in err, err
    assert "detail='lgpio on /dev/gpiochip0, Raspberry Pi 4B (revision c03114)'" in err, err
    assert "simulated=False" in err, err


def test_outputs_start_at_their_safe_level(run: Run) -> None:
    # pulled the other way before the agent started: the safe levels are the agent's doing
    assert run.results["led_at_start"] == "0"
    assert run.results["relay_at_start"] == "1"  # active-low relay, off: a high line


def test_an_input_edge_fires_a_rule_that_drives_the_outputs(run: Run) -> None:
    assert run.results["led_after_press"] == "1", run.diagnostics()
    assert run.results["relay_after_press"] == "0"  # on, active-low
    assert "rule_fired name=button-lights" in run.log("agent.err"), run.log("agent.err")


def test_sigterm_drives_every_output_safe_before_the_lines_are_released(run: Run) -> None:
    assert run.results["agent_rc"] == "0", run.log("agent.err")
    led, relay = traced(run, LED), traced(run, RELAY)
    assert [e for e in led if e.startswith("set")] == ["set 0"], run.log("trace.txt")
    assert [e for e in relay if e.startswith("set")] == ["set 1"], run.log("trace.txt")
    assert "in" not in led or led.index("set 0") < led.index("in")  # driven, then released
    # released, each line went back to its pull, the opposite of its safe level
    assert (run.results["led_after_exit"], run.results["relay_after_exit"]) == ("1", "0")
    err = run.log("agent.err")
    assert f"safe_state board=gpio pin=GPIO{LED} value=off line=low" in err, err
    assert f"safe_state board=gpio pin=GPIO{RELAY} value=off line=high" in err, err


def test_the_agent_stops_within_seconds_of_sigterm(run: Run, capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    """In order, and the stop well inside systemd's 90 s TimeoutStopSec even under TCG; the
    figures (not a measure of a Pi's speed) are printed for the README."""
    times = {key: float(run.results[key]) for key in
             ("agent_started", "agent_ready", "pressed", "rule_acted", "sigterm", "agent_stopped")}
    assert list(times.values()) == sorted(times.values()), times
    assert times["agent_stopped"] - times["sigterm"] < 30, times
    chroot = float(run.log("init.log").split("uptime=")[1].split()[0])
    with capsys.disabled():
        print(f"\naarch64 guest: chroot at {chroot:.1f} s, agent ready after"
              f" {times['agent_ready'] - times['agent_started']:.1f} s, rule acted in"
              f" {times['rule_acted'] - times['pressed']:.1f} s, stopped in"
              f" {times['agent_stopped'] - times['sigterm']:.1f} s; {run.seconds:.0f} s in all")
