"""Tools: what the model (and direct commands) can do, each gated by the SecurityPolicy."""
