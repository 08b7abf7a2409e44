"""grader.jail.runner and grader.sweep.cellrun: capped capture (a timing line after megabytes of chatter is
still seen), an output file read without following links or blocking on a FIFO, a 6 GB output
refused by size, and the one runner's checks of its inputs before every run."""
from __future__ import annotations

import os
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from grader.sweep import cellrun
from grader.data import inputs
from grader.sweep.check import classify
from grader.jail.runner import STDOUT_HEAD_BYTES, RunResult, run_program
from sssp_common.digest import distances_checksum
from grader.jail.sandbox import Sandbox

NEVER = Sandbox(user="never")
SPEC = ("The total computation kernel time on GPU X is 3.5 milli-seconds\n"
        "The total filtering kernel time on GPU X is 1 milli-seconds\n")
REFERENCE = np.array([0, 4, 2, 9, 5, 20], dtype=np.int64)
RIGHT = "".join(f"{v}:{d}\n" for v, d in enumerate(REFERENCE))


def shell(script: str):
    return lambda output: ["/bin/sh", "-c", textwrap.dedent(script).replace("OUTPUT", str(output))]


def test_timing_lines_after_megabytes_of_stdout_are_seen(tmp_path):
    script = f"""
        yes 'Correct: 5 Yours: 5' | head -c 3000000
        printf '{SPEC}'
        printf '{RIGHT}' > OUTPUT
        """
    with run_program(shell(script), 20, sandbox=NEVER) as result:
        verdict = classify(result, REFERENCE)
    assert result.stdout_bytes > 3_000_000 and len(result.stdout_head) <= STDOUT_HEAD_BYTES + 100
    assert verdict["status"] == "ok" and verdict["computation_ms"] == 3.5 and verdict["stdout_format"] == "ok"


def test_timing_lines_between_megabytes_of_chatter_are_seen(tmp_path):
    """Neither in the first nor in the last 64 KiB: found by the scan of the middle."""
    script = f"""
        yes 'Correct: 5 Yours: 5' | head -c 2000000
        printf '{SPEC}'
        yes 'Correct: 7 Yours: 7' | head -c 1000000
        printf '{RIGHT}' > OUTPUT
        """
    with run_program(shell(script), 20, sandbox=NEVER) as result:
        verdict = classify(result, REFERENCE)
    assert SPEC.splitlines()[0] not in result.stdout_head + result.stdout_tail
    assert verdict["status"] == "ok" and verdict["computation_ms"] == 3.5 and verdict["stdout_format"] == "ok"
    assert "Correct" not in result.stdout_middle   # chatter is not kept


def test_an_output_that_is_a_link_or_a_fifo_is_not_followed(tmp_path):
    answers = tmp_path / "answers.txt"
    answers.write_text(RIGHT)
    with run_program(shell(f"ln -s {answers} OUTPUT"), 10, sandbox=NEVER) as result:
        verdict = classify(result, REFERENCE)
    assert verdict["status"] == "malformed" and "symbolic link" in verdict["detail"]
    with run_program(shell("mkfifo OUTPUT"), 10, sandbox=NEVER) as result:
        verdict = classify(result, REFERENCE)
    assert verdict["status"] == "malformed" and "not a regular file" in verdict["detail"]


def test_a_6_gb_output_file_is_refused_by_its_size_without_reading_it(tmp_path):
    huge = tmp_path / "output.txt"
    with open(huge, "wb") as handle:        # sparse: no disk used
        handle.truncate(6 << 30)
    done = RunResult(argv=["x"], exit_code=0, stdout_head=SPEC, stderr_tail="", output_path=huge,
                     wall_s=0.1, timeout_s=5.0)
    verdict = classify(done, REFERENCE)
    assert verdict["status"] == "malformed" and "more than" in verdict["detail"]
    os.unlink(huge)


class _Rows(list):
    def append(self, row):
        super().append(row)


def test_the_one_runner_refuses_a_changed_input_or_reference(tmp_path):
    from grader.sweep.cells import Cell
    from grader.sweep.graphs import PreparedGraph
    from grader.grading.config import GradeRun
    graph_file = tmp_path / "in.txt"
    graph_file.write_text("0 1 4\n")
    graph = PreparedGraph("g", graph_file, REFERENCE[:2].copy(), 1, {"given": graph_file},
                          reference_checksum=distances_checksum(REFERENCE[:2]),
                          identities={"given": inputs.identity(graph_file)})
    cell = Cell("p", "g", "given", 256, 8, "bmf", "bmf", "no", "outcore", 0, "program@x")
    runner = GradeRun(name="t", command="{sssp} -input {input} -output {output}", config_dir=tmp_path,
                      timeout_s=5, sentinels=(), sandbox=NEVER, patterns=(), program_path=Path("/bin/true"))
    rows = _Rows()
    row, _ = cellrun.run_cell(cell, graph, runner, {}, rows)
    assert row["status"] == "no_output" and row["program_id"] == "program@x" and rows == [row]
    graph.reference[1] = 99                                   # the reference changed in memory
    row, _ = cellrun.run_cell(cell, graph, runner, {}, rows)
    assert row["status"] == "crash" and "checksum" in row["detail"] and row["command"] == []
    fixed = replace(graph, reference=REFERENCE[:2].copy())
    graph_file.write_text("0 1 5\n")                          # the input changed on disk
    row, _ = cellrun.run_cell(cell, fixed, runner, {}, rows)
    assert row["status"] == "crash" and "changed since it was written" in row["detail"]


def test_a_frozen_reference_is_hashed_once_and_cannot_be_written(monkeypatch):
    frozen = cellrun.freeze(REFERENCE)
    with pytest.raises(ValueError):
        frozen[1] = 99                                        # read-only: a change cannot happen in place
    assert frozen.flags.owndata and np.array_equal(frozen, REFERENCE) and REFERENCE.flags.writeable
    expected = distances_checksum(REFERENCE)
    hashed = []
    monkeypatch.setattr(cellrun, "distances_checksum", lambda d: hashed.append(1) or expected)
    assert not any(cellrun._reference_problem(frozen, expected) for _ in range(5))
    assert len(hashed) == 1                                   # once per process, not per run
    writable = REFERENCE.copy()
    assert not any(cellrun._reference_problem(writable, expected) for _ in range(3))
    assert len(hashed) == 4                                   # anything writable: before every run
    assert not cellrun._reference_problem(frozen[:3], expected) and len(hashed) == 5   # a view: hashed too
