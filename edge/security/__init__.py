"""Security: the policy that decides which pins may be used, how, and by whom.

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.security.approvals import ApprovalGate, Approver, Decision, is_admin
    from edge.security.policy import Action, PinRule, SecurityPolicy, SwitchBudget

__all__ = ["Action", "ApprovalGate", "Approver", "Decision", "PinRule", "SecurityPolicy",
           "SwitchBudget", "is_admin"]

_HOMES = {
    "approvals": ("ApprovalGate", "Approver", "Decision", "is_admin"),
    "policy": ("Action", "PinRule", "SecurityPolicy", "SwitchBudget"),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
