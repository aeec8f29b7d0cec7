"""The fleet: edge-agents asking each other over the broker.

Used by module, and the face imports none of them (config validation imports :mod:`board`, and
must stay light): :mod:`~edge.fleet.protocol` (the wire protocol: requests, responses, the
node's description; shared by both ends and ``edge-cli fleet`` / ``edge-cli --node``),
:mod:`~edge.fleet.responder` (the node's side: a request run through its own control
operations), :mod:`~edge.fleet.board` (``[boards.NAME] type = "node"``: its options and spec) and
:mod:`~edge.fleet.node_board` (its driver: another node's pins as a board),
:mod:`~edge.fleet.link` (both sides on the MQTT bridge's connection) and
:mod:`~edge.fleet.remote` (``edge-cli --node``'s client).
"""

__all__ = ["board", "link", "node_board", "protocol", "remote", "responder"]
