"""The reference's answer cache (reference/cache.py): entries checked on load, bad ones
recomputed with a one-line warning; verify() on answers callers hold."""
from __future__ import annotations

import io

import numpy as np
import pytest

import reference
from reference import solver
from sssp_common.digest import distances_checksum


@pytest.fixture
def computed(figure1_file):
    first = reference.compute(figure1_file)
    entry = next((solver.reference_dir()).glob(f"{first.digest}.*.npy"))
    return figure1_file, first, entry


def _recompute_with_warning(path, first):
    err = io.StringIO()
    again = reference.compute(path, err=err)
    assert not again.cached and np.array_equal(again.dist, first.dist)
    assert err.getvalue().count("\n") == 1 and "damaged" in err.getvalue()
    assert reference.compute(path, err=io.StringIO()).cached  # rewritten whole
    return err.getvalue()


def test_replaced_values_are_caught(computed):
    path, first, entry = computed
    wrong = first.dist.copy()
    wrong[3] += 1
    with open(entry, "wb") as stream:
        np.save(stream, wrong)
    assert "checksum mismatch" in _recompute_with_warning(path, first)


def test_short_array_is_caught(computed):
    path, first, entry = computed
    with open(entry, "wb") as stream:
        np.save(stream, first.dist[:4])
    assert "4 values, the name says 6" in _recompute_with_warning(path, first)


def test_wrong_dtype_is_caught(computed):
    path, first, entry = computed
    with open(entry, "wb") as stream:
        np.save(stream, first.dist.astype(np.int32))
    assert "not 1-D int64" in _recompute_with_warning(path, first)


def test_truncated_file_is_caught(computed):
    path, first, entry = computed
    entry.write_bytes(entry.read_bytes()[:40])
    assert "unreadable" in _recompute_with_warning(path, first)


def test_verify_catches_a_changed_answer(computed):
    _, first, _ = computed
    assert reference.verify(first) and reference.verify(first, n=6)
    assert not reference.verify(first, n=7)
    first.dist[2] = 99  # a caller that scribbled on the array it was handed
    assert not reference.verify(first)
    again = reference.compute(computed[0])  # the cache entry was written before: still good
    assert again.cached and again.dist[2] == 2 and reference.verify(again)


def test_verify_wants_int64_and_a_checksum():
    dist = np.array([0, 4, -1], dtype=np.int64)
    good = solver.ReferenceResult(dist, False, 0.0, "d", distances_checksum(dist))
    assert reference.verify(good)
    assert not reference.verify(solver.ReferenceResult(dist, False, 0.0, "d"))
    assert not reference.verify(solver.ReferenceResult(dist.astype(np.int32), False, 0.0, "d", good.checksum))


def test_unwritable_cache_still_answers(figure1_file, tmp_path, monkeypatch):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    monkeypatch.setenv("SSSP_CACHE_DIR", str(blocked))
    result = reference.compute(figure1_file)
    assert result.dist.tolist() == [0, 4, 2, 9, 5, 20] and reference.verify(result)
