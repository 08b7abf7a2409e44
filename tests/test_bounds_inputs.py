"""Bounded work on the other bytes a submission or a row supplies (issue 37 items 4 and 5): the
--nvcc/--arch Makefile rewrite is linear in a line's length and skips a giant Makefile, the
similarity step reads a capped number of bytes and tokens per student and says so, and
`grader report` survives any row `grade` could have written (fuzzed)."""
from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest

from grader.grading import build, similarity
from grader.grading.build import BuildOptions, replace_nvcc, rewrite_makefiles

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_fixtures import sweep_rows  # noqa: E402

OLD_NVCC = re.compile(r"(?<![\w./-])(?:/[^\s:=;'\"()]*/)?nvcc(?![\w.-])")   # what replace_nvcc stands in for


# ---- the Makefile rewrite ---------------------------------------------------------------------------

def counted(monkeypatch) -> dict:
    """Characters replace_nvcc scans (its `str.find` spans) and characters it looks at one by one."""
    work = {"scanned": 0, "looked": 0}
    finds, word_char = build._finds, build._word_char

    def counting_finds(line, word, start, end):
        work["scanned"] += end - start
        return finds(line, word, start, end)

    def counting_word_char(char):
        work["looked"] += 1
        return word_char(char)
    monkeypatch.setattr(build, "_finds", counting_finds)
    monkeypatch.setattr(build, "_word_char", counting_word_char)
    return work


def test_a_1_mb_makefile_line_is_rewritten_in_linear_work(monkeypatch):
    # every '/' a path may start at, no valid nvcc in the run (the old regex scanned to the run's
    # end from each: quadratic), then a real compiler path
    line = "CC = " + "+/" * 500_000 + "nvccx" + " /usr/local/cuda-8.0/bin/nvcc -arch=sm_30 -O3"
    work = counted(monkeypatch)
    new = replace_nvcc(line, lambda word: "/opt/cuda/bin/nvcc")
    assert new == line.replace("/usr/local/cuda-8.0/bin/nvcc", "/opt/cuda/bin/nvcc")
    assert len(line) > 1_000_000
    assert work["scanned"] <= 3 * len(line) and work["looked"] <= 2 * len(line), work
    # a path of 1 MB, every '/' of it a place a path may start: one replacement, in linear work too
    work.update(scanned=0, looked=0)
    assert replace_nvcc("CC = " + "+/" * 500_000 + "nvcc -O3", lambda word: "X") == "CC = +X -O3"
    assert work["scanned"] <= 3 * len(line) and work["looked"] <= 2 * len(line), work
    # the whole rewrite of that line: compiler and architecture
    rewritten = build._rewrite_line(line, BuildOptions(nvcc="/opt/cuda/bin/nvcc", arch="sm_90"))
    assert rewritten.endswith(" /opt/cuda/bin/nvcc -arch=sm_90 -O3")
    # the arch/gencode/code patterns start at a literal option name and nest no quantifier
    from grader.sweep.timings import nested_quantifier
    for pattern in (build._ARCH, build._GENCODE, build._CODE):
        assert nested_quantifier(pattern.pattern) == ""
        assert pattern.pattern.removeprefix("(?<![\\w-])").startswith("(?:-")    # tried only where an option starts


@pytest.mark.parametrize("seed", range(3))
def test_replace_nvcc_does_what_the_regex_did(seed):
    rng = random.Random(seed)
    pieces = ["/", "nvcc", "a", " ", "+", "-", ".", "(", ")", "=", "x/", "$(C)", "_", ":", "'"]
    for _ in range(20_000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert replace_nvcc(line, lambda w: "N") == OLD_NVCC.sub("N", line), repr(line)
    assert replace_nvcc("CC=/opt/nvcc/bin/nvcc -O3", lambda w: f"<{w}>") == "CC=</opt/nvcc/bin/nvcc> -O3"


def test_a_makefile_past_the_cap_is_left_as_it_is_and_said(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "MAKEFILE_MAX_BYTES", 10_000)
    (tmp_path / "Makefile").write_text("CC = nvcc\n" + "# padding\n" * 2000)
    (tmp_path / "small.mk").write_text("CC = nvcc\n")
    changes = rewrite_makefiles(tmp_path, BuildOptions(nvcc="/opt/nvcc"))
    assert (tmp_path / "Makefile").read_text().startswith("CC = nvcc\n")
    assert (tmp_path / "small.mk").read_text() == "CC = /opt/nvcc\n"
    assert any(c.startswith("Makefile: left as it is (20010 bytes") for c in changes), changes


# ---- the similarity step ----------------------------------------------------------------------------

def test_similarity_reads_a_capped_number_of_bytes_and_tokens_per_student(tmp_path, monkeypatch):
    monkeypatch.setattr(similarity, "MAX_STUDENT_BYTES", 300_000)
    monkeypatch.setattr(similarity, "MAX_TOKENS", 20_000)
    flood = tmp_path / "flood"
    flood.mkdir()
    for number in range(10):                       # 10 x 200 KB of one tiny token, over and over
        (flood / f"part{number}.c").write_text("a;" * 100_000)
    read, tokens = [], []
    reader, tokenizer = similarity.read_capped, similarity.tokenize

    def counting_read(path, limit):
        got = reader(path, limit)
        read.append(got[1])
        return got

    def counting_tokenize(*args, **kwargs):
        got = tokenizer(*args, **kwargs)
        tokens.append(len(got))
        return got
    monkeypatch.setattr(similarity, "read_capped", counting_read)
    monkeypatch.setattr(similarity, "tokenize", counting_tokenize)
    found = similarity.fingerprint_tree(flood)
    assert sum(read) <= 300_000 and sum(tokens) <= 20_000
    assert "tokens past the first 20000 not compared" in found.capped and "not read" in found.capped
    written = json.dumps(similarity.to_json(found))
    assert len(written) <= 64 * 20_000                                   # what it writes is bounded too
    assert all(len(places) <= similarity.MAX_PLACES for places in found.where.values())
    assert similarity.from_json(json.loads(written)).capped == found.capped
    # bytes that make no token (one long comment per file): the byte cap is what stops the reading
    quiet = tmp_path / "quiet"
    quiet.mkdir()
    for number in range(10):
        (quiet / f"part{number}.c").write_text("/*" + "x" * 200_000 + "*/")
    read.clear()
    found = similarity.fingerprint_tree(quiet)
    assert sum(read) == 300_000 and "read only in part" in found.capped and "not read" in found.capped
    # an ordinary student hits no cap
    small = tmp_path / "small"
    small.mkdir()
    (small / "sssp.c").write_text("int main(void) { int x = 0; for (int i = 0; i < 9; i++) x += i; return x; }\n")
    assert similarity.fingerprint_tree(small).capped == ""


def test_the_class_result_names_a_student_who_hit_a_cap(tmp_path, monkeypatch):
    from grader.grading import schedule
    monkeypatch.setattr(similarity, "MAX_TOKENS", 5_000)
    out, work = tmp_path / "out", tmp_path / "work"
    for student, text in (("flood", "a;" * 20_000), ("plain", "int f(int a) { return a + 1; }\n" * 20)):
        (work / student / "unpacked").mkdir(parents=True)
        (work / student / "unpacked" / "sssp.c").write_text(text)
        (out / student).mkdir(parents=True)
        (out / student / "results.json").write_text("{}")
    result = schedule.after_class(out, work, ["flood", "plain"], None)
    assert list(result["capped"]) == ["flood"] and "5000" in result["capped"]["flood"]


# ---- grader report over fuzzed rows -----------------------------------------------------------------

HOSTILE_VALUES = [None, "abc", "", 10 ** 400, -10 ** 30, float("nan"), float("inf"), float("-inf"), True, [1, 2],
                  {"a": 1}, "\ud800", "1e999", "NaN", 3.5, -1, 2 ** 63, "x" * 3000, "<script>", "=1+1", 0]


def fuzzed_rows(seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = sweep_rows(seed % 3, reps=1)[:rng.randint(5, 40)]
    keys = sorted({k for r in rows for k in r} | {"ran_alone", "times_source", "unreadable"})
    for row in rows:
        for _ in range(rng.randint(1, 5)):
            key = rng.choice(keys)
            if rng.random() < 0.2:
                row.pop(key, None)
            else:
                row[key] = rng.choice(HOSTILE_VALUES)
    return rows


def write_rows(path: Path, rows: list[dict], raw: list[bytes] = ()) -> Path:
    lines = [json.dumps(row).encode("utf-8", "surrogatepass") for row in rows] + list(raw)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("seed", [9, 10, 14, 21, 40, 103])     # each broke the report before (one kind each)
def test_report_survives_fuzzed_rows(tmp_path, seed, capsys):
    from grader.commands import report
    results = write_rows(tmp_path / "runs.jsonl", fuzzed_rows(seed),
                         [b'{"run_id": "\xff\xfe", "status": "ok"}', b"\xff\xfe not json"])
    code = report.run(results=[results], out_dir=tmp_path / "out", formats=("md", "html"))
    assert code == 0, capsys.readouterr().err
    written = list((tmp_path / "out").rglob("report.md"))
    assert written and all(len(p.name) < 255 for p in (tmp_path / "out").rglob("*"))


def test_the_frame_holds_only_numbers_in_range_where_numbers_go():
    from report.load import to_frame
    rows = [{"run_id": f"r{i}", "rounds": value, "computation_ms": value, "graph_vertices": value,
             "status": value, "program": value} for i, value in enumerate(HOSTILE_VALUES)]
    frame = to_frame(rows)
    assert len(frame) == len(HOSTILE_VALUES)
    assert frame["rounds"].dropna().abs().max() <= 2 ** 53
    assert frame["computation_ms"].dropna().abs().max() <= 1e15
    assert set(frame["rounds"].dropna().astype(int)) == {-1, 0}     # the only whole numbers in range
    assert set(frame["computation_ms"].dropna()) == {3.5, -1.0, 0.0}
    assert all(isinstance(v, str) and len(v) <= 2000 for v in frame["program"])
    "".join(frame["program"]).encode("utf-8")          # no lone surrogate left to break a write
