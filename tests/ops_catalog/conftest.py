"""The fleet's fixtures (a real Mosquitto, agents on it), for the operation a node is asked."""

from tests.fleet.conftest import broker, fleet_agent  # noqa: F401
