"""The base of every config section (unknown keys are errors; defaults are validated too), on a
floor below the schema so that section modules (sensors, schedules, rules, mqtt) and the
``Config`` model that gathers them import it without a cycle."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)
