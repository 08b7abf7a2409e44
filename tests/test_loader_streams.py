"""The reader's limits: streams read once, 1 MB lines, corrupt gzip, and a cache that cannot go stale or lie."""
from __future__ import annotations

import gzip
import os
import threading
import time

import numpy as np
import pytest

from sssp_common import loader
from sssp_common.errors import InputError
from sssp_common.loader import cache_root, load_graph


def feed_fifo(path, data: bytes | None = None, endless: bytes | None = None):
    """Make a FIFO at ``path`` and write to it from a thread (``endless``: until the reader goes)."""
    os.mkfifo(path)

    def writer():
        try:
            with open(path, "wb") as stream:
                if data is not None:
                    stream.write(data)
                while endless is not None:
                    stream.write(endless)
        except (BrokenPipeError, OSError):
            pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    return thread


def test_fifo_is_read_once_and_not_cached(tmp_path):
    fifo = tmp_path / "edges"
    thread = feed_fifo(fifo, b"# streamed\n0 1 4\n1 2 3\n")
    g = load_graph(fifo)
    thread.join(5)
    assert (g.n, g.src.tolist(), g.w.tolist()) == (3, [0, 1], [4, 3])
    assert not cache_root().exists() or list(cache_root().iterdir()) == []


def test_gzip_and_dimacs_streams_are_recognised_by_content(tmp_path):
    fifo = tmp_path / "g1"
    thread = feed_fifo(fifo, gzip.compress(b"0 1 7\n1 2 1\n"))
    assert load_graph(fifo).w.tolist() == [7, 1]
    thread.join(5)
    fifo = tmp_path / "g2"
    thread = feed_fifo(fifo, b"c a road\np sp 3 2\na 1 2 10\na 2 3 5\n")
    g = load_graph(fifo)
    thread.join(5)
    assert (g.n, g.src.tolist(), g.dst.tolist()) == (3, [0, 1], [1, 2])


def test_endless_line_from_a_stream_stops_quickly(tmp_path):
    """Like -input /dev/zero: no newline ever; refused after 1 MB, not after all memory."""
    fifo = tmp_path / "zeros"
    feed_fifo(fifo, endless=b"\0" * 65536)
    started = time.perf_counter()
    with pytest.raises(InputError, match="longer than 1 MB") as caught:
        load_graph(fifo)
    assert caught.value.line == 1
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("gz", [False, True])
def test_long_line_in_a_file_names_the_line(tmp_path, gz):
    data = b"0 1\n1 2\n" + b"\0" * (2 << 20) + b"\n3 4\n"
    path = tmp_path / ("zeros.txt.gz" if gz else "zeros.txt")
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(InputError, match="longer than 1 MB") as caught:
        load_graph(path)
    assert caught.value.line == 3 and str(path) in str(caught.value)


def test_a_line_just_under_the_limit_is_fine(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_bytes(b"0 1" + b" " * (loader.LINE_LIMIT - 10) + b"\n1 2\n")
    assert load_graph(path).m == 2


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupt_gzip_is_one_clear_error(tmp_path, damage):
    data = bytearray(gzip.compress(b"".join(b"%d %d 1\n" % (i, i + 1) for i in range(20000))))
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    else:
        data = data[: len(data) // 2]
    path = tmp_path / "g.txt.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="corrupt gzip") as caught:
        load_graph(path)
    assert "\n" not in str(caught.value)


def test_same_size_edit_with_mtime_restored_is_seen(tmp_path):
    """touch -d can put the modification time back; the change time it cannot."""
    path = tmp_path / "g.txt"
    path.write_text("0 1 3\n1 2 4\n")
    stat = path.stat()
    assert load_graph(path).w.tolist() == [3, 4]
    time.sleep(0.01)
    path.write_text("0 1 5\n1 2 6\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert load_graph(path).w.tolist() == [5, 6]


def cached_entry(path):
    load_graph(path)
    (entry,) = [e for e in cache_root().iterdir() if not e.name.startswith(".")]
    return entry


@pytest.mark.parametrize("damage", ["replace_weights", "short_array", "meta_n", "meta_garbage", "wrong_dtype"])
def test_a_damaged_cache_entry_is_rebuilt_with_a_warning(tmp_path, capsys, damage):
    path = tmp_path / "g.txt"
    path.write_text("0 1 3\n1 2 4\n2 3 5\n")
    entry = cached_entry(path)
    if damage == "replace_weights":
        np.save(entry / "w.npy", np.array([9, 9, 9], dtype=np.int32))
    elif damage == "short_array":
        np.save(entry / "dst.npy", np.array([1, 2], dtype=np.int32))
    elif damage == "meta_n":
        meta = (entry / "meta.json").read_text().replace('"n": 4', '"n": 3')
        (entry / "meta.json").write_text(meta)
    elif damage == "meta_garbage":
        (entry / "meta.json").write_text("{not json")
    else:
        np.save(entry / "src.npy", np.array([0, 1, 2], dtype=np.int64))
    capsys.readouterr()
    g = load_graph(path)
    assert (g.n, g.w.tolist(), g.dst.tolist()) == (4, [3, 4, 5], [1, 2, 3])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "damaged" in err and str(path) in err
    load_graph(path)  # rebuilt: no second warning
    assert capsys.readouterr().err == ""


def test_a_failed_cache_write_leaves_no_staging_folder(tmp_path, monkeypatch):
    path = tmp_path / "g.txt"
    path.write_text("0 1 3\n")
    real_save = np.save
    calls = []

    def failing_save(file, array, *args, **kwargs):
        calls.append(file)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_save(file, array, *args, **kwargs)

    monkeypatch.setattr(loader.np, "save", failing_save)
    assert load_graph(path).m == 1
    assert len(calls) == 2 and list(cache_root().iterdir()) == []


def test_a_read_only_cache_folder_costs_only_speed(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0 1 3\n")
    cache_root().mkdir(parents=True)
    os.chmod(cache_root(), 0o500)
    try:
        assert load_graph(path).w.tolist() == [3]
        assert load_graph(path).w.tolist() == [3]
        assert list(cache_root().iterdir()) == [] or os.geteuid() == 0
    finally:
        os.chmod(cache_root(), 0o700)
