"""The attack tests' fleet (config tails for :func:`~tests.fleet.conftest.fleet_agent`): node ``b``
with a pump on GPIO22, and a controller ``ctl`` whose ``node`` board ``b`` is that pump."""

from __future__ import annotations

NODE_B = """
[security]
autonomy = "full"
max_actuations_per_minute = 100000
[boards.gpio]
type = "gpio"
[boards.gpio.aliases]
pump = "GPIO22"
[boards.gpio.pins]
pump = {mode = "output", safe = "off", max_on_seconds = 600, max_switches_per_minute = 6000}
"""
B = "edge-agent/b"
PUMP = 22
"""The pump's GPIO (its mock pin: ``mock_factory.pin(PUMP)``)."""
UNAUTHENTICATED = "allow_unauthenticated = true\n"
"""Put first in a tail, it lands in ``[mqtt]``."""


def controller_of_b(timeout: float = 5) -> str:
    """The controller's tail: board ``b`` answers within ``timeout`` seconds (the requests'
    expiry too)."""
    return f"""
[security]
autonomy = "full"
max_actuations_per_minute = 100000
[boards.b]
type = "node"
node_id = "b"
timeout_seconds = {timeout:g}
[boards.b.pins]
pump = {{mode = "output", max_switches_per_minute = 6000}}
"""
