"""Relevance calibration: one embedding model's cosine mapped onto the relevance scale that
``min_relevance`` is written in, so one threshold means the same for every embedder.

Cosines are not comparable across models. all-MiniLM-L6-v2 gives a paraphrase that shares no word
with the memory about 0.3-0.6 and unrelated text about 0.0-0.3; weighted 0.7 in the hybrid score,
a raw cosine under 0.57 could never clear the default ``min_relevance`` of 0.4 on meaning alone.
Each model is described by two cosines, measured on pairs of related and unrelated sentences
(bench/bench_memory.py prints them for the configured embedder):

- ``noise``: the median cosine of unrelated text, mapped to relevance 0;
- ``boundary``: the cosine that unrelated text hardly ever reaches, where related begins, mapped
  to ``BOUNDARY_RELEVANCE`` (0.6), so a memory found by meaning alone scores 0.7 x 0.6 = 0.42
  with the default weights and clears the default threshold of 0.4.

Between the anchors the map is linear; above the boundary relevance rises one for one with the
cosine, up to 1, so the differences between related memories weigh as much against keyword
evidence as raw cosines did. A model that was not measured is ``UNCALIBRATED``: relevance is the
cosine itself (the behaviour before calibration).

>>> [round(MINILM.relevance(c), 3) for c in (0.0, 0.2, MINILM.boundary, 0.5, 0.95)]
[0.0, 0.333, 0.6, 0.78, 1.0]
>>> UNCALIBRATED.relevance(0.45), UNCALIBRATED.relevance(0.8)
(0.45, 0.8)
>>> calibration_for("all-MiniLM-L6-v2-int8@8199be6f699a+q8u8") is MINILM
True
>>> calibration_for("all-minilm@http://localhost:11434/v1") is MINILM, calibration_for("none")
(True, RelevanceCalibration(noise=0.0, boundary=0.6))
"""

from __future__ import annotations

from dataclasses import dataclass

BOUNDARY_RELEVANCE = 0.6
"""The relevance of a cosine at an embedder's boundary (see the module docstring)."""


@dataclass(frozen=True)
class RelevanceCalibration:
    noise: float
    """Median cosine of unrelated text: relevance 0."""
    boundary: float
    """Cosine where related text begins: relevance ``BOUNDARY_RELEVANCE``."""

    def __post_init__(self) -> None:
        if not self.noise < self.boundary < 1.0:
            raise ValueError("a relevance calibration needs noise < boundary < 1")

    def relevance(self, cosine: float) -> float:
        """``cosine`` on the relevance scale, in [0, 1]."""
        if cosine >= self.boundary:
            return min(1.0, cosine + (BOUNDARY_RELEVANCE - self.boundary))
        return max(0.0, (cosine - self.noise) * (BOUNDARY_RELEVANCE / (self.boundary - self.noise)))


UNCALIBRATED = RelevanceCalibration(noise=0.0, boundary=BOUNDARY_RELEVANCE)
"""Relevance equals the cosine: for models nobody has measured."""

MINILM = RelevanceCalibration(noise=0.05, boundary=0.32)
"""all-MiniLM-L6-v2 (the packaged onnx model, re-quantised or as shipped, or served by Ollama as
``all-minilm``), measured on tests/memory/paraphrases.toml (edge/memory/README.md)."""

MEASURED = {"all-minilm-l6-v2": MINILM, "all-minilm-l6-v2-int8": MINILM, "all-minilm": MINILM,
            "all-minilm:l6-v2": MINILM}
"""Model names (lower case, without a ``:latest`` tag) whose cosines were measured."""


def model_name(model_id: str) -> str:
    """The bare model name in a model id: ``name@digest``, ``name@base_url``, ``org/name``."""
    name = model_id.split("@", 1)[0].rsplit("/", 1)[-1].lower()
    return name.removesuffix(":latest")


def calibration_for(model_id: str) -> RelevanceCalibration:
    """The measured calibration of the model ``model_id`` names, else ``UNCALIBRATED``."""
    return MEASURED.get(model_name(model_id), UNCALIBRATED)
