"""``[[interlocks]]``: conditions between outputs, inputs, sensors and boards that the one door
to the pins enforces before it acts, whoever asks. Each is exactly one of three shapes:

- ``forbid = "PIN on|off"`` ``while = CONDITION``: the output may not take that state while the
  condition holds (``tank_low on``, ``tank.level < 20``, ``board uno down``: the rules' grammar);
- ``exclusive = [A, B, ...]``: at most one of them on;
- ``at_most = N`` ``of = [A, B, ...]``: at most N of them on (inrush, a supply's budget).

The text is checked against the pins and sensors by :mod:`edge.automation.interlocks` when the
agent (or ``edge-cli config check``) starts; here it is only data.

>>> InterlockConfig.model_validate({"name": "dry-run", "forbid": "pump on", "while": "tank_low on"}).while_
'tank_low on'
>>> InterlockConfig(name="psu", at_most=2, of=["v1", "v2", "v3"]).shape
'at_most'
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import AfterValidator, ConfigDict, Field, model_validator

from edge.config.section import Section, check_name

Shape = Literal["forbid", "exclusive", "at_most"]


class InterlockConfig(Section):
    """One interlock; ``name`` is how refusals, trips, logs and ``edge-cli interlocks`` call it."""

    model_config = ConfigDict(extra="forbid", validate_default=True, populate_by_name=True)

    name: Annotated[str, AfterValidator(check_name)]
    forbid: str | None = Field(default=None, min_length=1)
    """``PIN on`` or ``PIN off``: the output state refused while ``while`` holds."""
    while_: str | None = Field(default=None, alias="while", min_length=1)
    """``PIN on|off`` (any allowlisted pin), ``SENSOR.QUANTITY < VALUE`` (``>``, ``>=``, ``<=``)
    or ``board NAME down``. A failing or stale sensor, or a board that is down, counts as true."""
    exclusive: list[str] | None = Field(default=None, min_length=2)
    at_most: int | None = Field(default=None, ge=0)
    of: list[str] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def one_shape(self) -> Self:
        shapes = [self.forbid is not None or self.while_ is not None,
                  self.exclusive is not None, self.at_most is not None or self.of is not None]
        if sum(shapes) != 1:
            raise ValueError("an interlock is exactly one of: forbid + while, exclusive, "
                             "or at_most + of")
        if shapes[0] and (self.forbid is None or self.while_ is None):
            raise ValueError("forbid and while go together (forbid = \"pump on\", "
                             "while = \"tank_low on\")")
        if shapes[2] and (self.at_most is None or self.of is None):
            raise ValueError("at_most and of go together (at_most = 2, of = [\"valve1\", ...])")
        return self

    @property
    def shape(self) -> Shape:
        if self.forbid is not None:
            return "forbid"
        return "exclusive" if self.exclusive is not None else "at_most"

    @property
    def group(self) -> list[str]:
        """The outputs an ``exclusive`` or ``at_most`` interlock counts."""
        return list(self.exclusive or self.of or [])

    @property
    def limit(self) -> int:
        return 1 if self.exclusive is not None else (self.at_most or 0)
