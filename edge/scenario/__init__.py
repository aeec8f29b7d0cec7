"""Scenario tests of a person's own config: ``edge-cli test SCENARIO.toml`` runs the agent of
that config on simulated boards and sensors, in process, on a fast clock, through the steps the
scenario lists (press an input, set a reading, let time pass, a chat message, a scripted model
turn, an MQTT command, an MCP call) and checks what it expects (a pin, a refusal naming an
interlock, a trip, a notification, an audit record, a reply).

| what | module |
| --- | --- |
| a scenario file: its steps, read and checked | ``steps.py`` |
| the world: simulated boards, chat channels and model in memory | ``world.py`` |
| running the steps, and what an expectation waits for | ``runner.py`` |
| the outcome in words and as JUnit XML | ``report.py`` |
| reading a scenario file and its config | ``files.py`` |
| the same as pytest fixtures | ``pytest_plugin.py`` |
"""

__all__ = ["files", "pytest_plugin", "report", "runner", "steps", "world"]
