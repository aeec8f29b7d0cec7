"""An in-memory matrix of normalised float32 vectors, so a query costs one matrix product instead
of decoding every BLOB (shared/notes/embeddings.md: 10k rows 0.3 ms, 100k about 10 ms, against
24 ms and 330 ms re-reading BLOBs). Rows are addressed by the memories table's integer ``num``.

Growth adds a quarter to the capacity (doubling left up to half the matrix empty: 25 MB for
10,000 memories where 15 MB are used); removal moves the last row into the hole. 1,536 bytes per
memory.
``search`` may run in a worker thread while the event loop stores (numpy releases the GIL during
the product, so recall overlaps it with the FTS5 query); a lock keeps rows and nums consistent.
"""

from __future__ import annotations

import threading
from typing import Any

INITIAL_CAPACITY = 256
GROWTH = 1.25


def capacity_for(rows: int) -> int:
    """The rows the matrix has room for once it holds ``rows``: 256, then a quarter more each
    time it fills (the soak counts the growth of this matrix as the memories' own)."""
    capacity = INITIAL_CAPACITY
    while capacity < rows:
        capacity = int(capacity * GROWTH)
    return capacity


class VectorIndex:
    def __init__(self, dimensions: int):
        import numpy as np

        self._np = np
        self.dimensions = dimensions
        """0 until the first vector arrives when the embedder does not know it in advance."""
        self._matrix = np.zeros((INITIAL_CAPACITY, dimensions), dtype=np.float32)
        self._nums: list[int] = []
        self._row_of: dict[int, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._nums)

    @property
    def capacity(self) -> int:
        """Rows the matrix holds room for (``capacity * dimensions * 4`` bytes)."""
        return len(self._matrix)

    def __contains__(self, num: int) -> bool:
        return num in self._row_of

    @staticmethod
    def decode(blob: bytes) -> Any:
        import numpy as np

        return np.frombuffer(blob, dtype="<f4")

    @staticmethod
    def encode(vector: Any) -> bytes:
        import numpy as np

        return np.asarray(vector, dtype="<f4").tobytes()

    def _grow(self, needed: int) -> None:
        if needed <= len(self._matrix):
            return
        capacity = capacity_for(needed)
        grown = self._np.zeros((capacity, self.dimensions), dtype=self._np.float32)
        grown[: len(self._nums)] = self._matrix[: len(self._nums)]
        self._matrix = grown

    def put(self, num: int, vector: Any) -> None:
        with self._lock:
            self._put(num, vector)

    def _put(self, num: int, vector: Any) -> None:
        if self.dimensions == 0:
            self.dimensions = len(vector)
            self._matrix = self._np.zeros((INITIAL_CAPACITY, self.dimensions), dtype=self._np.float32)
        row = self._row_of.get(num)
        if row is None:
            self._grow(len(self._nums) + 1)
            row = len(self._nums)
            self._nums.append(num)
            self._row_of[num] = row
        self._matrix[row] = vector

    def put_many(self, nums: list[int], vectors: Any) -> None:
        with self._lock:
            for num, vector in zip(nums, vectors, strict=True):
                self._put(num, vector)

    def remove(self, num: int) -> None:
        with self._lock:
            self._remove(num)

    def _remove(self, num: int) -> None:
        row = self._row_of.pop(num, None)
        if row is None:
            return
        last = len(self._nums) - 1
        if row != last:
            moved = self._nums[last]
            self._matrix[row] = self._matrix[last]
            self._nums[row] = moved
            self._row_of[moved] = row
        self._nums.pop()

    def search(self, query: Any, limit: int) -> list[tuple[int, float]]:
        """The ``limit`` rows with the highest cosine to ``query`` (normalised), best first."""
        with self._lock:
            return self._search(query, limit)

    def _search(self, query: Any, limit: int) -> list[tuple[int, float]]:
        size = len(self._nums)
        if size == 0 or limit <= 0:
            return []
        np = self._np
        scores = self._matrix[:size] @ np.asarray(query, dtype=np.float32)
        top = np.argpartition(scores, size - limit)[size - limit:] if size > limit else np.arange(size)
        top = top[np.argsort(scores[top])[::-1]]
        return [(self._nums[i], float(scores[i])) for i in top]
