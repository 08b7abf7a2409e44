"""Judge one run in separate dimensions: distances, output format, stdout format, times.

The distance verdict is judged on the distances alone (a right answer printed with odd
stdout or `v: d` lines is right) and stays the record's `status`, the field the sweep summary
and the report read: `ok`, `wrong` (also for an incomplete file: vertices missing, repeated or
out of range), `timeout`, `crash`, `no_output`, `malformed` (the output file is unparsable).
A run that crashed or timed out is that, whatever files exist; its file is still judged and
kept as `file_distances`, so staff can see "exit code 1, but the distances were right".
A memory or I/O failure while checking is that run's failure (`malformed`, said so), never
the sweep's.
"""
from __future__ import annotations

import signal
from pathlib import Path

import numpy as np

from grader.sweep import outfile, timings
from grader.sweep.outfile import NoOutput, Unparsable
from grader.sweep.timings import DEFAULT_PATTERNS, read_extras
from sssp_common.vocabulary import UNREACHABLE

SHOW_DIFFERENCES = 5
# distance verdict -> the record's status (CONTRACTS.md)
STATUS_OF = {"ok": "ok", "wrong": "wrong", "incomplete": "wrong", "unparsable": "malformed",
             "no_output": "no_output", "crash": "crash", "timeout": "timeout"}
MalformedOutput = Unparsable   # the name the sweep's first tests knew


def parse_output(path: Path | str, n: int, sentinels=(), max_bytes: int | None = None) -> np.ndarray:
    """Distances (int64, UNREACHABLE = -1) indexed by vertex; raises MalformedOutput (unparsable
    or incomplete). Sentinels read as unreachable here; `judge_file` is more careful."""
    parsed = outfile.parse(outfile.read_capped(path, max_bytes or outfile.size_bound(n)))
    values, inf, problem = outfile.placed(parsed, n)
    if problem:
        raise MalformedOutput(problem)
    unreachable = inf | np.isin(values, np.asarray(sentinels, dtype=np.int64))
    return np.where(unreachable, UNREACHABLE, values)


def _shown(value: int) -> str:
    return "INF" if value == UNREACHABLE else str(int(value))


def compare(got: np.ndarray, expected: np.ndarray) -> tuple[int, str]:
    """(number of differing vertices, 'v: expected X got Y; ...' for the first few)."""
    differ = np.flatnonzero(got != expected)
    shown = "; ".join(f"{v}: expected {_shown(expected[v])} got {_shown(got[v])}" for v in differ[:SHOW_DIFFERENCES])
    more = f"; ... ({differ.size - SHOW_DIFFERENCES} more)" if differ.size > SHOW_DIFFERENCES else ""
    return int(differ.size), (f"{differ.size} of {expected.size} vertices differ: {shown}{more}" if differ.size else "")


def differing_in(detail: str) -> list[int]:
    """The vertices `compare`'s detail names (its first few), read back: a race's graded run said
    which vertices it got wrong even when no re-run fails again."""
    _, _, listed = detail.partition(" vertices differ: ")
    found = []
    for item in listed.split("; ")[:SHOW_DIFFERENCES]:
        vertex, colon, rest = item.partition(": expected ")
        if colon and vertex.isdigit() and len(vertex) < 12:
            found.append(int(vertex))
    return found


def judge_file(path: Path | str, reference: np.ndarray, sentinels=(), max_bytes: int | None = None) -> dict:
    """The output file alone: distances verdict, mismatches, detail, format deviations."""
    n = int(reference.shape[0])
    try:
        parsed = outfile.parse(outfile.read_capped(path, max_bytes or outfile.size_bound(n)))
    except NoOutput:
        return {"distances": "no_output", "mismatches": None, "detail": "no output file", "deviations": None}
    except Unparsable as error:
        return {"distances": "unparsable", "mismatches": None, "detail": f"output file: {error}", "deviations": None}
    except (MemoryError, OSError) as error:
        return {"distances": "unparsable", "mismatches": None, "deviations": None,
                "detail": f"output file: checking failed ({type(error).__name__}: {error})"}
    values, inf, problem = outfile.placed(parsed, n)
    if problem:
        return {"distances": "incomplete", "mismatches": None, "detail": f"output file incomplete: {problem}",
                "deviations": parsed.deviations}
    # a sentinel means unreachable, unless the right distance happens to be that number
    sentinel = np.isin(values, np.asarray(sentinels, dtype=np.int64)) & (values != reference) & ~inf
    if sentinel.any():
        used = sorted({int(v) for v in values[sentinel][:100]})
        parsed.deviations.append(f"unreachable written as {', '.join(map(str, used))} (the spec: INF)")
    got = np.where(inf | sentinel, UNREACHABLE, values)
    mismatches, detail = compare(got, reference)
    return {"distances": "wrong" if mismatches else "ok", "mismatches": mismatches or None, "detail": detail,
            "deviations": parsed.deviations}


def _exit_reason(result) -> str:
    if result.exit_code is not None and result.exit_code < 0:
        try:
            why = f"killed by {signal.Signals(-result.exit_code).name}"
        except ValueError:
            why = f"killed by signal {-result.exit_code}"
    else:
        why = f"exit code {result.exit_code}"
    said = stderr_summary(getattr(result, "stderr_head", ""), result.stderr_tail)
    return why + (f"; stderr: {said}" if said else "; stderr empty")


def stderr_summary(head: str, tail: str, first: int = 2, last: int = 3, width: int = 600) -> str:
    """The first and the last non-blank lines of stderr, each cut, joined with ' | ' (' | ... | '
    where lines were left out): the cause a program names first (`unknown method`, then its
    usage text) and how it ended both survive. head: stderr's start (may be ''); tail: its end,
    '[...] '-prefixed by the runner when the start was cut off."""
    whole = not tail.startswith("[...] ")
    tail_lines = _nonblank(tail if whole else tail[len("[...] "):], skip_first=not whole)
    head_lines = tail_lines if whole else _nonblank(head, skip_last=True)
    opening = head_lines[:first]
    ending = tail_lines[-last:] if len(tail_lines) > last else tail_lines
    if whole and len(tail_lines) <= first + last:
        opening, ending = tail_lines, []
    cut = width // max(1, len(opening) + len(ending))
    shown = [line[:cut] for line in opening]
    if ending:
        left_out = (not whole) or len(tail_lines) > first + last
        shown += (["..."] if left_out else []) + [line[:cut] for line in ending]
    return " | ".join(shown)


def _nonblank(text: str, skip_first: bool = False, skip_last: bool = False) -> list[str]:
    """Stripped non-blank lines; a partial first (a tail cut mid-line) or last line dropped."""
    lines = text.split("\n")
    if skip_first and len(lines) > 1:
        lines = lines[1:]
    if skip_last and len(lines) > 1:
        lines = lines[:-1]
    return [line.strip() for line in lines if line.strip()]


def classify(result, reference: np.ndarray, sentinels=(), patterns=DEFAULT_PATTERNS,
             max_output_bytes: int | None = None) -> dict:
    """Every verdict of one run (CONTRACTS.md): status and the dimensions beside it."""
    stdout = getattr(result, "stdout_text", result.stdout_head)
    found = timings.times(stdout, patterns)
    extras, unreadable = read_extras(stdout)
    record = {"status": "ok", "computation_ms": found["computation_ms"], "filtering_ms": found["filtering_ms"],
              **extras, "unreadable": found["unreadable"] + unreadable,   # numbers out of range: None, said why
              "mismatches": None, "detail": "", "device": found["device"],
              "distances": "ok", "file_distances": None, "output_format": None, "output_deviations": None,
              "stdout_format": "ok", "stdout_problems": timings.stdout_format(stdout),
              "times_source": found["times_source"],
              "time_flag": timings.wall_flag(found["computation_ms"], found["filtering_ms"], result.wall_s,
                                            found["device"])}
    if record["stdout_problems"]:
        record["stdout_format"] = "deviates"
    try:
        judged = judge_file(result.output_path, reference, sentinels, max_output_bytes)
    except MemoryError as error:   # anything the file does to the checker stays this run's problem
        judged = {"distances": "unparsable", "mismatches": None, "deviations": None,
                  "detail": f"output file: checking failed (MemoryError: {error})"}
    if judged["deviations"] is not None:
        record["output_deviations"] = judged["deviations"]
        record["output_format"] = "deviates" if judged["deviations"] else "ok"
    if result.launch_error:
        return {**record, "status": "crash", "distances": "crash", "detail": result.launch_error}
    if result.exit_code is None or result.exit_code != 0:
        verdict = "timeout" if result.exit_code is None else "crash"
        why = f"killed after {result.timeout_s:g} s" if verdict == "timeout" else _exit_reason(result)
        file_note = {"ok": "; the output file's distances were right",
                     "wrong": f"; the output file was wrong too ({judged['detail'][:200]})"}.get(judged["distances"], "")
        return {**record, "status": verdict, "distances": verdict, "file_distances": judged["distances"],
                "mismatches": judged["mismatches"], "detail": why + file_note}
    verdict = judged["distances"]
    detail = judged["detail"] if verdict != "no_output" else "exited 0 but wrote no output file"
    return {**record, "status": STATUS_OF[verdict], "distances": verdict, "file_distances": verdict,
            "mismatches": judged["mismatches"], "detail": detail}
