"""``edge-cli``: run the agent and operate it over SSH."""
