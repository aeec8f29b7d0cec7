"""A sensor driver written by following peripherals/sensors/README.md ("Adding a sensor driver"),
for tests only: it counts its own reads, scaled like an ADC channel (``count * scale + offset``
in ``unit``), so a test knows what each read yields.

Its registration is the README's one line, in a copy of the tree (tests/peripherals/test_recipes.py):
``"tally": "peripherals.sensors.tally:SPEC"`` in :data:`peripherals.sensors.factory.SENSORS`.

>>> tally = SPEC.build("clicks", TallyOptions(scale=2, quantity="clicks", unit=""), SensorContext())
>>> tally.units, [tally.read()["clicks"].value for _ in range(3)]
({'clicks': ''}, [2.0, 4.0, 6.0])
"""

from __future__ import annotations

from pydantic import Field

from peripherals.sensors.base import Reading, ScaledOptions, Scaling, Sensor, SensorContext, SensorSpec


class TallyOptions(ScaledOptions):
    """Counts its reads from ``start``; yields ``count * scale + offset`` as ``quantity``."""

    start: int = Field(default=0, ge=0)


class TallySensor(Sensor):
    kind = "tally"

    def __init__(self, name: str, start: int, scaling: Scaling):
        self.name, self.count, self.scaling = name, start, scaling
        self.units = {scaling.quantity: scaling.unit}

    def read(self) -> dict[str, Reading]:
        self.count += 1
        return {self.scaling.quantity: self.scaling.reading(self.count)}

    def describe(self) -> str:
        return f"tally at {self.count}"


def build(name: str, options: TallyOptions, context: SensorContext) -> Sensor:
    return TallySensor(name, options.start, options.scaling)


SPEC = SensorSpec("tally", TallyOptions, build)
