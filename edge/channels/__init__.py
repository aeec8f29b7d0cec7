"""Channels carry messages between people and the agent, behind the Channel protocol."""
