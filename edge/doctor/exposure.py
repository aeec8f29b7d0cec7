"""Settings that are valid but open the agent wider than an owner usually means: warned about by
``edge-cli config check`` and ``edge-cli doctor``, never refused. Each channel says its own
(:attr:`edge.channels.spec.ChannelSpec.exposure`); the fleet's is said here.

>>> from edge.config.model import Config
>>> [risk] = exposure_warnings(Config.model_validate(
...     {"channels": {"telegram": {"allowed_users": ["*"]}}}))
>>> risk.split(":")[0]
'channels.telegram.allowed_users = ["*"]'
"""

from __future__ import annotations

from edge.channels.registry import CHANNELS
from edge.config.model import Config


def exposure_warnings(config: Config) -> list[str]:
    """One line per setting that lets strangers in; empty when there is none."""
    found = [warning for spec in CHANNELS.values() if spec.exposure is not None
             if (warning := spec.exposure(spec.section(config))) is not None]
    if config.mqtt.enabled and config.mqtt.allow_unauthenticated:
        found.append("mqtt.allow_unauthenticated = true: anyone the broker admits can run "
                     "requests on this node (as mqtt:unverified:<any name>) and answer for the "
                     "nodes it asks without a key; pair the agents instead (`edge-cli fleet "
                     "pair NAME`) and remove it")
    return found
