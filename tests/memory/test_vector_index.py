"""VectorIndex: top-k by cosine, and searches in a worker thread racing stores and removals."""

import threading

import numpy as np

from edge.memory.vector_index import VectorIndex


def unit(rng, n, dims=16):
    vectors = rng.standard_normal((n, dims)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_search_returns_the_nearest_rows_best_first():
    rng = np.random.default_rng(1)
    vectors = unit(rng, 300)
    index = VectorIndex(16)
    index.put_many(list(range(1000, 1300)), vectors)
    index.remove(1005)
    found = index.search(vectors[7], 3)
    assert found[0][0] == 1007 and abs(found[0][1] - 1.0) < 1e-5
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    assert 1005 not in index and len(index) == 299


def test_searches_in_a_thread_see_consistent_rows_while_the_index_changes():
    rng = np.random.default_rng(2)
    vectors = unit(rng, 8000)
    index = VectorIndex(16)
    index.put_many(list(range(4000)), vectors[:4000])
    query = vectors[0]
    errors: list[str] = []
    done = threading.Event()

    def search():
        while not done.is_set():
            try:
                for num, score in index.search(query, 20):
                    if abs(float(vectors[num] @ query) - score) > 1e-4:
                        errors.append(f"row for {num} scored {score}")
            except (IndexError, KeyError) as exc:
                errors.append(repr(exc))

    worker = threading.Thread(target=search)
    worker.start()
    for num in range(4000, 8000):
        index.put(num, vectors[num])
        index.remove(num - 4000 + 1)       # keeps num 0, the query's own row
    done.set()
    worker.join()
    assert errors == [] and len(index) == 4000 and 0 in index


def test_the_matrix_grows_by_a_quarter_not_double():
    """Room for at most a quarter more rows than stored: 10,000 memories take about 19 MB,
    not the 25 MB doubling gave."""
    rng = np.random.default_rng(3)
    index = VectorIndex(16)
    for count in (257, 1000, 5001):
        index.put_many(list(range(len(index), count)), unit(rng, count - len(index)))
        assert count <= index.capacity <= 1.25 * count
    found = index.search(unit(rng, 1)[0], 5)
    assert len(found) == 5
