"""The agent as a node on an MQTT broker, and in Home Assistant.

Topics under ``<base>`` (``[mqtt] base_topic``, default ``edge-agent/<node_id>``):

- ``<base>/availability``: ``online`` while connected, ``offline`` (the last will, retained) when
  the agent stops or vanishes;
- ``<base>/<pin>``: each allowlisted pin's state, retained, on every change whoever made it
  (``ON``/``OFF``; a servo's angle; an analog input's value); a PWM pin also has
  ``<base>/<pin>/duty`` (percent);
- ``<base>/<pin>/set``: commands (``ON``/``OFF``, a PWM duty in percent, a servo angle), each
  through the hardware's one door as ``mqtt:<topic>`` (the caller's rate limit, then the pin's
  own ``max_switches_per_minute``); refusals go to ``<base>/refused``. Only the published name
  is a command topic: ``GPIO17/set`` or ``BOARD11/set`` for the pin published as ``led`` find
  nothing;
- ``<base>/sensor/<sensor>/<quantity>``: sensor readings, retained;
- ``<base>/events``: what the boards reported (inputs, watchdog trips, down and up);
- ``<base>/health``: version, uptime and boards, retained;
- ``<base>/chat`` and ``<base>/chat/reply`` (``[mqtt] chat = true``): a chat channel
  (:mod:`edge.mqtt.chat`).

Home Assistant finds the pins and sensors through MQTT discovery (:mod:`edge.mqtt.discovery`).
The modules here import the MQTT client (aiomqtt) only where they connect: the rest stay light.
"""
