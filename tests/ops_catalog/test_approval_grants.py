"""``/approvals`` in chat: an admin lists the durable approvals and revokes one; anyone else is
refused and nothing changes."""

from __future__ import annotations

from pathlib import Path

from edge.security.approval_store import APPROVALS_FILE, ApprovalStore
from tests.fakes.openai_server import OpenAIServer
from tests.helpers import msg


async def test_an_admin_lists_and_revokes_durable_approvals_in_chat(start_agent, isolated_env):
    store = ApprovalStore(Path(isolated_env["EDGE_STATE_DIR"]) / APPROVALS_FILE)
    grant = store.grant("token:claude", "gpio:GPIO17", "write", "telegram:42")
    with OpenAIServer([]) as server:
        agent = await start_agent(f'[provider]\nbase_url = "{server.base_url}"\n'
                                  'model = "test-model"\n[channels.telegram]\nadmins = ["42"]\n')
        command = agent.runtime.agent.command
        refused = await command(msg("/approvals", sender="7", channel="telegram"))
        assert refused is not None and refused.startswith("Only an admin")
        listed = await command(msg("/approvals", sender="42", channel="telegram"))
        assert listed is not None and f"{grant.id}  token:claude  write gpio:GPIO17" in listed
        assert "granted by telegram:42" in listed
        not_theirs = await command(msg(f"/approvals revoke {grant.id}", sender="7",
                                       channel="telegram"))
        assert not_theirs is not None and not_theirs.startswith("Only an admin")
        assert store.covers("token:claude", "gpio:GPIO17", "write")
        revoked = await command(msg(f"/approvals revoke {grant.id}", sender="42",
                                    channel="telegram"))
        assert revoked is not None and revoked.startswith(f"Revoked {grant.id}")
        assert store.grants() == [] and server.requests == []
