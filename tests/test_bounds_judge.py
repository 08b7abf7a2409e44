"""Judging hostile output is bounded (issue 37 items 4 and 6, issue 38 item 3): stdout is matched
line by line on lines cut at LINE_CAP, every number is range-checked ("unreadable", never a
harness failure), a run the harness could not judge is run once more and then counts as not
right, and a crash's detail keeps stderr's first lines as well as its last.

Each hostile program is a shell script run through the one runner `grade` uses
(grader.sweep.cellrun.run_cell), outside the jail (Sandbox(user="never")): what is tested is
the judging, not the isolation."""
from __future__ import annotations

import re
import textwrap
from collections import deque
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from grader.data import inputs
from grader.grading.config import GradeRun
from grader.grading.rubric import load_rubric, score
from grader.grading.student import rows_as_they_come
from grader.jail.runner import run_program
from grader.jail.sandbox import Sandbox
from grader.sweep import cellrun, timings
from grader.sweep.cells import Cell
from grader.sweep.check import classify, stderr_summary
from grader.sweep.graphs import PreparedGraph
from sssp_common.digest import distances_checksum

ROOT = Path(__file__).resolve().parents[1]
NEVER = Sandbox(user="never")
REFERENCE = np.array([0, 4, 2, 9, 5, 20], dtype=np.int64)
RIGHT = "".join(f"{v}:{d}\n" for v, d in enumerate(REFERENCE))
WRONG = RIGHT.replace("3:9", "3:8")
SPEC = ("The total computation kernel time on GPU X is 3.5 milli-seconds\n"
        "The total filtering kernel time on GPU X is 1 milli-seconds\n")


class _Rows(list):
    def append(self, row):
        super().append(row)


def graph_and_runner(tmp_path: Path, program: Path):
    graph_file = tmp_path / "in.txt"
    graph_file.write_text("0 1 4\n")
    graph = PreparedGraph("g", graph_file, cellrun.freeze(REFERENCE), 1, {"given": graph_file},
                          reference_checksum=distances_checksum(REFERENCE),
                          identities={"given": inputs.identity(graph_file)})
    runner = GradeRun(name="t", command="{sssp} {output}", config_dir=tmp_path, timeout_s=20, sentinels=(),
                      sandbox=NEVER, patterns=timings.DEFAULT_PATTERNS, program_path=program)
    return graph, runner


def cell(ordering="given", bsize=256, sync="outcore", method="bmf") -> Cell:
    return Cell("student", "g", ordering, bsize, 8, method, method, "no", sync, 0, "submission@x")


def hostile(tmp_path: Path, name: str, body: str) -> Path:
    """A program: `{sssp} OUTPUT` runs this script with the output path as $1."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


# ---- 1. the blanks line: every pattern sees one capped line, never the whole stdout ----------------

class Counting:
    """A compiled pattern that records the length of every text it is asked to match."""

    def __init__(self, pattern: re.Pattern, seen: list):
        self.pattern, self.seen = pattern, seen
        self.groupindex = pattern.groupindex

    def _count(self, name, text, *args):
        self.seen.append(len(text))
        return getattr(self.pattern, name)(text, *args)

    def search(self, text, *args):
        return self._count("search", text, *args)

    def match(self, text, *args):
        return self._count("match", text, *args)

    def fullmatch(self, text, *args):
        return self._count("fullmatch", text, *args)


def counting_patterns(monkeypatch) -> list:
    """Every pattern timings matches stdout with, counted (the staff patterns through timings.re)."""
    seen: list = []
    for table in (timings.TOLERANT, timings.STRICT, timings._EXTRAS):
        for key, pattern in list(table.items()):
            monkeypatch.setitem(table, key, Counting(pattern, seen))
    monkeypatch.setattr(timings, "_WALL", Counting(timings._WALL, seen))
    monkeypatch.setattr(timings, "re", SimpleNamespace(compile=lambda *a: Counting(re.compile(*a), seen)))
    return seen


BLANKS = "total computation kernel time is" + " " * 65_000 + "\n"


def test_the_blanks_line_is_judged_on_one_capped_line_by_patterns_that_cannot_nest(monkeypatch):
    stdout = BLANKS + "\n" * 65_000 + SPEC.splitlines()[1] + "\nrounds:" + " " * 65_000 + "7\n"
    own = [p.pattern for t in (timings.TOLERANT, timings.STRICT, timings._EXTRAS) for p in t.values()]
    seen = counting_patterns(monkeypatch)
    found = timings.times(stdout)
    problems = timings.stdout_format(stdout)
    extras, notes = timings.read_extras(stdout)
    assert timings.wall_startup(stdout) is None
    # the work: no pattern is ever handed more than one line of LINE_CAP characters
    assert seen and max(seen) <= timings.LINE_CAP, max(seen)
    lines = stdout.count("\n") + 1
    assert sum(seen) <= 20 * (len(stdout) + lines)       # a bounded number of passes over the (cut) text
    assert sum(1 for n in seen if n > 100) <= 20          # the two long lines: a few patterns each
    # what the lines say: the blanks line has no number within the cap, the filtering line is read
    assert found["computation_ms"] is None and found["filtering_ms"] == 1.0
    assert any(p.startswith("no computation line") for p in problems)
    assert extras["rounds"] is None and notes == []
    # and no pattern the grader runs on stdout nests a quantifier
    for regex in own + [timings._WALL.pattern.pattern] + [p.regex for p in timings.DEFAULT_PATTERNS]:
        assert timings.nested_quantifier(regex) == "", regex
    assert timings.nested_quantifier(r"(\d+)+ms") and timings.nested_quantifier(r"(?:a|aa)*b")


def test_a_staff_pattern_that_nests_a_quantifier_is_refused_at_config_load(tmp_path):
    from grader.grading.config import _patterns
    from grader.tomlfile import ConfigError
    with pytest.raises(ConfigError, match="exponential"):
        _patterns([{"name": "bad", "regex": r"Took (?P<value>(\d+)+) ms", "stage": "computation"}], tmp_path / "g.toml")
    assert _patterns([{"name": "ok", "regex": r"Took (?P<value>\d+) ms", "stage": "computation"}], tmp_path)


def test_the_blanks_program_gets_a_judged_row(tmp_path):
    program = hostile(tmp_path, "blanks.sh", f"""
        printf 'total computation kernel time is'
        head -c 65000 /dev/zero | tr '\\0' ' '
        printf '\\n'
        printf '{RIGHT}' > "$1"
        """)
    graph, runner = graph_and_runner(tmp_path, program)
    row, _ = cellrun.run_cell(cell(), graph, runner, {}, _Rows())
    assert row["status"] == "ok" and row["computation_ms"] is None and row["stdout_format"] == "deviates"
    assert not row["detail"].startswith("harness:")


# ---- 2. 5,000 digits of rounds: unreadable, the run stays wrong, and scores as wrong ----------------

def test_rounds_of_5000_digits_are_unreadable_and_the_wrong_run_scores_as_wrong(tmp_path):
    digits = "7" * 5000
    liar = hostile(tmp_path, "liar.sh", f"""
        printf '{SPEC}'
        printf 'rounds: {digits}\\nedges processed: {digits}\\n'
        printf '{WRONG}' > "$1"
        """)
    graph, runner = graph_and_runner(tmp_path, liar)
    wrong, _ = cellrun.run_cell(cell(), graph, runner, {}, _Rows())
    assert wrong["status"] == "wrong" and not wrong["detail"].startswith("harness:")
    assert wrong["rounds"] is None and wrong["edges_processed"] is None
    assert any(note.startswith("rounds unreadable") for note in wrong["unreadable"]), wrong["unreadable"]
    assert wrong["computation_ms"] == 3.5                  # what could be read still is
    good = hostile(tmp_path, "good.sh", f"printf '{SPEC}rounds: 3\\n'; printf '{RIGHT}' > \"$1\"\n")
    graph, right_runner = graph_and_runner(tmp_path, good)
    right, _ = cellrun.run_cell(cell(bsize=512), graph, right_runner, {}, _Rows())
    assert right["status"] == "ok" and right["rounds"] == 3 and right["unreadable"] == []
    # scored: one right, one wrong run of bmf on one graph
    cells = [cell(), cell(bsize=512)]
    rows = {cells[0].run_id: wrong, cells[1].run_id: right}
    built = {"built": True, "cleaned": True, "detail": ""}
    code = [t for t in score(load_rubric(ROOT / "configs" / "rubric.toml"), built, cells, rows) if t["max_score"]]
    # build 5 + clean 5 + half of correctness 36 + half of output format 7 + half of timing lines 7
    assert sum(t["score"] for t in code if "Report" not in t["name"]) == pytest.approx(35.0)
    gated = score(load_rubric(ROOT / "configs" / "rubric-gate.toml"), built, cells, rows)
    assert sum(t["score"] for t in gated if "Report" not in t["name"]) == 0


def test_a_time_out_of_range_is_unreadable_not_a_failure():
    huge = "The total computation kernel time on GPU X is " + "9" * 400 + " milli-seconds\n"
    found = timings.times(huge + "The total filtering kernel time on GPU X is 1e999 milli-seconds\nTook 5ms\n")
    assert found["computation_ms"] is None and found["times_source"]["computation"] == "unreadable"
    assert found["filtering_ms"] is None and found["times_source"]["filtering"] == "unreadable"
    assert len(found["unreadable"]) == 2                  # and `Took 5ms` does not stand in for them
    assert timings.wall_startup("wall: total 1 s (start-up 1e400, device 0.1)") is None
    assert timings.read_extras("rounds: " + "1" * 19)[0]["rounds"] is None
    assert timings.read_extras("rounds: " + "1" * 18)[0]["rounds"] == int("1" * 18)


# ---- 3. a harness failure: run once more; failing again, not right everywhere ----------------------

class FakePool:
    """Hands back, per key, the next of the outcomes it was given for that key."""

    def __init__(self, outcomes: dict):
        self.outcomes, self.submitted, self.ready = outcomes, [], deque()

    def submit(self, key, task):
        self.submitted.append(key)
        self.ready.append(SimpleNamespace(key=key, row=self.outcomes[key].pop(0), error=""))

    def drain(self, wait=True):
        while self.ready:
            yield self.ready.popleft()


def harness_row(c: Cell) -> dict:
    return {"run_id": c.run_id, "status": "crash", "distances": "crash", "ordering": c.ordering, "bsize": c.bsize,
            "bcount": c.bcount, "sync": c.sync, "detail": "harness: OSError: the worker's disk is full"}


def ok_row(c: Cell) -> dict:
    return {"run_id": c.run_id, "status": "ok", "distances": "ok", "ordering": c.ordering, "bsize": c.bsize,
            "bcount": c.bcount, "sync": c.sync, "detail": "", "output_deviations": [], "stdout_format": "ok"}


def test_a_harness_failure_is_run_again_and_failing_twice_is_not_right_in_the_gate():
    flaky, broken, fine = cell(ordering="given"), cell(ordering="source"), cell(ordering="destination")
    pool = FakePool({flaky.run_id: [harness_row(flaky), ok_row(flaky)],
                     broken.run_id: [harness_row(broken), harness_row(broken)],
                     fine.run_id: [ok_row(fine)]})
    tasks = {c.run_id: SimpleNamespace(cell=c) for c in (flaky, broken, fine)}
    for key, task in tasks.items():
        pool.submit(key, task)
    came = {task.cell.run_id: row for task, row in rows_as_they_come(pool, tasks)}
    assert sorted(pool.submitted) == sorted([flaky.run_id, flaky.run_id, broken.run_id, broken.run_id, fine.run_id])
    assert came[flaky.run_id]["status"] == "ok"                       # a hiccup costs the student nothing
    assert came[broken.run_id]["detail"].startswith("harness:") and "failed both times" in came[broken.run_id]["detail"]
    assert tasks == {}
    cells = [flaky, broken, fine]
    built = {"built": True, "cleaned": True, "detail": ""}
    gated = score(load_rubric(ROOT / "configs" / "rubric-gate.toml"), built, cells, came)
    assert sum(t["score"] for t in gated if "Report" not in t["name"]) == 0     # not dropped from the gate
    plain = {t["name"]: t for t in score(load_rubric(ROOT / "configs" / "rubric.toml"), built, cells, came)}
    assert plain["bmf correct on g"]["score"] == pytest.approx(36 * 2 / 3, abs=1e-3)  # nor from the shares
    assert plain["Timing lines on stdout (the spec's two lines)"]["score"] == pytest.approx(7 * 2 / 3, abs=1e-3)
    assert "the grader could not judge this run" in plain["bmf correct on g"]["output"]
    assert "disk is full" in plain["bmf correct on g"]["output"]


# ---- 4. a crash's detail: the first lines of stderr (the cause) and the last -----------------------

USAGE = "".join(f"  -opt{i} N what option {i} does\\n" for i in range(60))


def test_a_crash_detail_keeps_the_first_line_of_a_usage_text(tmp_path):
    script = f"printf \"sssp: error: unknown method 'tep'\\nusage: sssp -input FILE ...\\n{USAGE}\" >&2; exit 2"
    with run_program(lambda output: ["/bin/sh", "-c", script], 10, sandbox=NEVER) as result:
        verdict = classify(result, REFERENCE)
    assert verdict["status"] == "crash"
    assert "unknown method 'tep'" in verdict["detail"] and "-opt59 N what option 59 does" in verdict["detail"]
    assert verdict["detail"].index("unknown method") < verdict["detail"].index("-opt59")


def test_a_crash_detail_keeps_the_first_line_past_the_stderr_tail(tmp_path):
    """Longer than the 8 KiB tail the runner keeps: the first line comes from stderr's head."""
    script = ("echo 'fatal: cannot open graph.bin' >&2; i=0; while [ $i -lt 3000 ]; do "
              "echo \"  at frame $i of the unwinding\" >&2; i=$((i+1)); done; echo 'aborted' >&2; exit 3")
    with run_program(lambda output: ["/bin/sh", "-c", script], 20, sandbox=NEVER) as result:
        verdict = classify(result, REFERENCE)
    assert verdict["detail"].startswith("exit code 3; stderr: fatal: cannot open graph.bin")
    assert verdict["detail"].endswith("aborted") and " | ... | " in verdict["detail"]
    assert len(verdict["detail"]) < 700


def test_stderr_summary_shapes():
    assert stderr_summary("", "") == ""
    assert stderr_summary("", "one\n\n two \n") == "one | two"
    many = "".join(f"line {i}\n" for i in range(10))
    assert stderr_summary("", many) == "line 0 | line 1 | ... | line 7 | line 8 | line 9"
    # a cut tail: its first (partial) line dropped, the head's last (partial) line too
    assert stderr_summary("first\nsecond\nthi", "[...] al line\nend 1\nend 2\n") == "first | second | ... | end 1 | end 2"
    assert len(stderr_summary("", "x" * 100_000 + "\n" + "y" * 100_000)) <= 610
