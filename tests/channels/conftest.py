"""Channel tests run a real Runtime in-process against loopback chat servers: the
``start_agent`` fixture (tests/fakes/inprocess.py)."""
