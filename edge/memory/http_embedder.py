"""Embeddings from an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint: OpenAI itself,
or ``custom:<base_url>`` for Ollama and local servers. Vectors are
L2-normalised here, since not every server does it.
"""

from __future__ import annotations

import math
from typing import Any

import httpx

from edge.core.httpclient import async_client, normalise_base_url
from edge.memory.base import EmbeddingError, EmbeddingProvider

OPENAI_BASE_URL = "https://api.openai.com/v1"
ERROR_TEXT_LIMIT = 300


def _normalised(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else vector


class HttpEmbedding(EmbeddingProvider):
    """Nothing to load; ``close`` closes the HTTP client."""

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *,
                 dimensions: int | None = None, timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.base_url = normalise_base_url(base_url)
        self.model = model
        self._model_id = f"{model}@{self.base_url}"
        self._dimensions = dimensions
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = async_client(self.base_url, timeout=timeout, headers=headers,
                                    transport=transport)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimensions(self) -> int:
        return self._dimensions or 0

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        payload: dict[str, Any] = {"model": self.model, "input": texts}
        if self._dimensions:
            payload["dimensions"] = self._dimensions
        try:
            response = await self._client.post(f"{self.base_url}/embeddings", json=payload)
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"embedding server {self.base_url} unreachable ({exc}); check "
                                 "[memory] embedder or set it to \"onnx\"") from exc
        if response.status_code != 200:
            raise EmbeddingError(f"embedding server {self.base_url} answered "
                                 f"{response.status_code}: {response.text[:ERROR_TEXT_LIMIT]}")
        try:
            data = sorted(response.json()["data"], key=lambda item: item.get("index", 0))
            vectors = [[float(x) for x in item["embedding"]] for item in data]
        except (ValueError, KeyError, TypeError):
            raise EmbeddingError(f"embedding server {self.base_url} sent no data[].embedding") from None
        if len(vectors) != len(texts):
            raise EmbeddingError(f"embedding server returned {len(vectors)} vectors for {len(texts)} texts")
        self._dimensions = self._dimensions or len(vectors[0])
        return [_normalised(v) for v in vectors]

    async def close(self) -> None:
        await self._client.aclose()
