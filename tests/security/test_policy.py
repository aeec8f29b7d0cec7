"""SecurityPolicy: allowlist, modes, rate limit; refusals logged with the caller."""

from __future__ import annotations

import logging

import pytest

from edge.core.exc import PolicyDenied
from edge.security.policy import Action, PinRule, SecurityPolicy
from peripherals.base import PinMode
from tests.helpers import asker


@pytest.fixture
def policy():
    rules = [PinRule("gpio", "GPIO17", PinMode.OUTPUT, "gpio:GPIO17 (led)"),
             PinRule("gpio", "GPIO27", PinMode.INPUT),
             PinRule("gpio", "GPIO18", PinMode.PWM)]
    return SecurityPolicy(rules, max_actuations_per_minute=3)


def test_unlisted_pin_is_refused_and_logged_with_caller(policy, caplog):
    caplog.set_level(logging.WARNING)
    with pytest.raises(PolicyDenied, match="not in the allowlist"):
        policy.authorize("gpio", "GPIO22", Action.WRITE, asker("telegram:42"))
    assert "by=telegram:42" in caplog.text and "pin=GPIO22" in caplog.text


@pytest.mark.parametrize("pin,action,allowed", [
    ("GPIO17", Action.READ, True), ("GPIO17", Action.WRITE, True), ("GPIO17", Action.PWM, False),
    ("GPIO27", Action.READ, True), ("GPIO27", Action.WRITE, False), ("GPIO27", Action.PWM, False),
    ("GPIO18", Action.WRITE, True), ("GPIO18", Action.PWM, True),
])
def test_mode_decides_the_allowed_actions(policy, pin, action, allowed):
    if allowed:
        assert policy.authorize("gpio", pin, action, asker("t")).pin == pin
    else:
        with pytest.raises(PolicyDenied, match="does not allow"):
            policy.authorize("gpio", pin, action, asker("t"))


def test_rate_limit_is_per_caller_and_slides():
    now = [0.0]
    policy = SecurityPolicy([PinRule("gpio", "GPIO17", PinMode.OUTPUT)], 2, clock=lambda: now[0])
    for _ in range(2):
        policy.authorize("gpio", "GPIO17", Action.WRITE, asker("a"))
    with pytest.raises(PolicyDenied, match="rate limit"):
        policy.authorize("gpio", "GPIO17", Action.WRITE, asker("a"))
    policy.authorize("gpio", "GPIO17", Action.WRITE, asker("b"))  # another caller has its own budget
    policy.authorize("gpio", "GPIO17", Action.READ, asker("a"))  # reads are not limited
    now[0] = 61.0
    policy.authorize("gpio", "GPIO17", Action.WRITE, asker("a"))


