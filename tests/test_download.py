"""grader/download.py against misbehaving servers on 127.0.0.1: byte cap, deadline, idle and
minimum-rate timeouts, cross-host redirects, resumes the server answers wrongly."""
from __future__ import annotations

import io
import time

import pytest

from grader.data.download import FetchError, Limits, download
from tests import http_server

DATA = bytes(range(256)) * 400  # 102,400 bytes


def _limits(**overrides):
    settings = dict(deadline_s=5, idle_s=2, min_rate=100, rate_window_s=1, retries=0)
    settings.update(overrides)
    return Limits(**settings)


def test_plain_download(server, tmp_path):
    server.files["f"] = DATA
    part = tmp_path / "f.part"
    assert download(http_server.url(server, "f"), part, _limits(max_bytes=len(DATA)), out=io.StringIO()) == len(DATA)
    assert part.read_bytes() == DATA


def test_endless_body_stops_at_the_cap(server, tmp_path):
    server.behaviours["f"] = ("endless", None)
    part = tmp_path / "f.part"
    started = time.monotonic()
    with pytest.raises(FetchError, match="more than the 200,000 bytes expected") as info:
        download(http_server.url(server, "f"), part, _limits(max_bytes=200_000), out=io.StringIO())
    assert not info.value.interrupted  # not worth resuming: the caller deletes it
    assert part.stat().st_size <= 200_000 and time.monotonic() - started < 3


def test_a_declared_length_over_the_cap_is_refused_before_reading(server, tmp_path):
    server.files["f"] = DATA
    with pytest.raises(FetchError, match="offers 102,400 bytes, more than the 1,000 expected"):
        download(http_server.url(server, "f"), tmp_path / "f.part", _limits(max_bytes=1000), out=io.StringIO())


def test_a_trickle_is_given_up_by_the_minimum_rate(server, tmp_path):
    server.behaviours["f"] = ("trickle", 0.1)  # 10 bytes/s, a byte every 0.1 s: never idle
    started = time.monotonic()
    with pytest.raises(FetchError, match="slower than 100 bytes/s") as info:
        download(http_server.url(server, "f"), tmp_path / "f.part", _limits(), out=io.StringIO())
    assert info.value.interrupted and time.monotonic() - started < 3


def test_one_byte_every_ten_seconds_is_given_up_when_idle(server, tmp_path):
    server.behaviours["f"] = ("trickle", 10.0)
    started = time.monotonic()
    with pytest.raises(FetchError, match="no data for 1 s") as info:
        download(http_server.url(server, "f"), tmp_path / "f.part", _limits(idle_s=1), out=io.StringIO())
    assert info.value.interrupted and "run again to resume" in str(info.value)
    assert time.monotonic() - started < 3


def test_the_overall_deadline(server, tmp_path):
    server.behaviours["f"] = ("steady", 0.05)  # 20 kB/s forever: fast enough, never done
    started = time.monotonic()
    with pytest.raises(FetchError, match="deadline"):
        download(http_server.url(server, "f"), tmp_path / "f.part", _limits(deadline_s=1.0), out=io.StringIO())
    assert time.monotonic() - started < 3


def test_a_redirect_to_another_host_is_refused_unless_allowed(server, tmp_path):
    server.files["f"] = DATA
    server.behaviours["moved"] = ("redirect", http_server.url(server, "f", host="localhost"))
    part = tmp_path / "f.part"
    with pytest.raises(FetchError, match="another host .*--allow-redirect-host"):
        download(http_server.url(server, "moved"), part, _limits(), out=io.StringIO())
    assert not part.exists()
    download(http_server.url(server, "moved"), part, _limits(allow_redirect_host=True), out=io.StringIO())
    assert part.read_bytes() == DATA


def test_a_redirect_on_the_same_host_is_followed(server, tmp_path):
    server.files["f"] = DATA
    server.behaviours["moved"] = ("redirect", "/f")
    part = tmp_path / "f.part"
    download(http_server.url(server, "moved"), part, _limits(), out=io.StringIO())
    assert part.read_bytes() == DATA


def test_a_resume_continues_where_it_stopped(server, tmp_path):
    server.files["f"] = DATA
    part = tmp_path / "f.part"
    part.write_bytes(DATA[:1000])
    download(http_server.url(server, "f"), part, _limits(), out=io.StringIO())
    assert server.requests[-1][1] == "bytes=1000-" and part.read_bytes() == DATA


def test_a_206_from_the_wrong_byte_restarts_cleanly(server, tmp_path):
    server.behaviours["f"] = ("range_from_zero", DATA)
    part = tmp_path / "f.part"
    part.write_bytes(DATA[:1000])
    out = io.StringIO()
    download(http_server.url(server, "f"), part, _limits(), out=out)
    assert part.read_bytes() == DATA  # not DATA[:1000] + DATA
    assert "starting over" in out.getvalue()
    assert [r[1] for r in server.requests] == ["bytes=1000-", None]


def test_a_200_to_a_range_request_starts_from_zero(server, tmp_path):
    server.files["f"] = DATA
    server.ranges = False
    part = tmp_path / "f.part"
    part.write_bytes(DATA[:1000])
    for _ in range(3):  # retries never grow it
        download(http_server.url(server, "f"), part, _limits(), out=io.StringIO())
        assert part.read_bytes() == DATA


def test_a_cut_transfer_is_retried_from_where_it_stopped(server, tmp_path):
    server.files["f"] = DATA
    server.cut = 5000
    part, out = tmp_path / "f.part", io.StringIO()
    assert download(http_server.url(server, "f"), part, _limits(retries=1, backoff_s=0), out=out) == len(DATA)
    assert part.read_bytes() == DATA and "try 2 of 2" in out.getvalue()
    assert [wanted for _, wanted in server.requests] == [None, "bytes=5000-"]   # resumed, not restarted


def test_retries_are_counted_and_a_dead_server_is_given_up(tmp_path):
    import socket
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = io.StringIO()
    with pytest.raises(FetchError, match="cannot reach"):
        download(f"http://127.0.0.1:{port}/f", tmp_path / "f.part", _limits(retries=2, backoff_s=0), out=out)
    assert out.getvalue().count("cannot reach") == 2   # two retries said, the third failure raised


def test_a_cut_transfer_keeps_its_prefix_for_resuming(server, tmp_path):
    server.files["f"] = DATA
    server.cut = 5000
    part = tmp_path / "f.part"
    with pytest.raises(FetchError, match="ended early: 5,000 of 102,400") as info:
        download(http_server.url(server, "f"), part, _limits(), out=io.StringIO())
    assert info.value.interrupted and part.read_bytes() == DATA[:5000]
