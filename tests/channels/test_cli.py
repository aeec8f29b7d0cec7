"""The CLI channel: piped input is read to the end, every turn answered, then the agent exits."""

from __future__ import annotations

import io

from edge.runtime import Runtime


async def test_piped_input_runs_every_line_then_exits(default_config, mock_factory):
    stdin = io.StringIO("/gpio led on\n\n/pins\n/gpio GPIO4 on\n")
    stdout = io.StringIO()
    runtime = Runtime(default_config, resident=True, pin_factory=mock_factory,
                      stdin=stdin, stdout=stdout)
    await runtime.run()
    lines = [line.strip() for line in stdout.getvalue().splitlines()]
    assert lines[0] == "gpio:GPIO17 (led) set on"
    assert "gpio:GPIO17 (led) output = on, safe off" in lines
    assert lines[-1].startswith("Error: gpio:GPIO4 is not in the allowlist")
    assert mock_factory.pin(17).state == 0  # safe level restored on exit
    assert not default_config.control_socket.exists()
