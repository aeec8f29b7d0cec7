"""The fleet: edge-agents asking each other over the broker.

- :mod:`edge.fleet.protocol`: the wire protocol (requests, responses, the node's description),
  shared by both ends and by ``edge-cli fleet`` / ``edge-cli --node``.
- :mod:`edge.fleet.responder`: the node's side: a request run through its own door.
- :mod:`edge.fleet.board`: the controller's side: ``[boards.NAME] type = "node"``, another
  node's pins as a board.
"""
