"""Settings that are valid but open the agent wider than an owner usually means: warned about by
``edge-cli config check`` and ``edge-cli doctor``, never refused.

>>> from edge.config.model import Config
>>> [risk] = exposure_warnings(Config.model_validate(
...     {"channels": {"telegram": {"allowed_users": ["*"]}}}))
>>> risk.split(":")[0]
'channels.telegram.allowed_users = ["*"]'
"""

from __future__ import annotations

from edge.config.model import Config

WILDCARD = "*"


def exposure_warnings(config: Config) -> list[str]:
    """One line per setting that lets strangers in; empty when there is none."""
    found = []
    for key, channel, title, allowed in (
            ("allowed_users", "telegram", "Telegram", config.channels.telegram.allowed_users),
            ("allowed_numbers", "signal", "Signal", config.channels.signal.allowed_numbers)):
        if WILDCARD in allowed:
            found.append(f'channels.{channel}.{key} = ["*"]: anyone on {title} who finds the '
                         "bot can talk to the agent and drive its pins; list "
                         f"{'user ids' if channel == 'telegram' else 'numbers'} instead (or pair "
                         f"them: `edge-cli channel pair {channel}`)")
    if config.mqtt.enabled and config.mqtt.allow_unauthenticated:
        found.append("mqtt.allow_unauthenticated = true: anyone the broker admits can run "
                     "requests on this node (as mqtt:unverified:<any name>) and answer for the "
                     "nodes it asks without a key; pair the agents instead (`edge-cli fleet "
                     "pair NAME`) and remove it")
    return found
