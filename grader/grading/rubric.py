"""Scores from a rubric (configs/rubric.toml), by the spec's weights: the code part (build,
`make clean`, each required method's correctness on each graph, the output file's format and
the timing lines), `opt` as extra credit above the maximum, and the report as a line staff
fill in. The tests come out in Gradescope's results.json shape.

Correctness gates the rest: format and timing points come only from runs whose distances are
right, and every run that was tried (timeouts and crashes too, and a run the harness could not
judge twice: never dropped) is in every denominator, so a program with no right distance earns
build and clean points and nothing else. What the spec
does not ask for (a final newline, LF line ends, single spaces, how unreachable is spelled)
costs nothing: it is noted. `gate = true` is the spec's literal rule instead: any required run
not right, and the code part is 0.

Exact: every share and sum is a fractions.Fraction (grader.grading.points); a test's score
stays exact until grader.grading.gradebook.results_json rounds it once, to the rubric's
`decimals` (default 2), so 7 x 18/54 + ... adds up to 30, never 29.9999.

Pure: build facts, run records and the report's facts in, a list of tests out.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from grader.grading.points import DEFAULT_DECIMALS, MAX_DECIMALS, exact
from grader.tomlfile import check_keys, read_toml

PARTIAL = ("fraction", "all")
# How a (graph, method, sync, ordering, rep) is scored across the matrix's configurations (bsize x
# bcount): "each" configuration's run is its own share of every test (the default); "any": scored
# once, right when right at any configuration (its first right run stands for it, else its first
# run), so a run at another configuration cannot change a score once one is right: what lets
# `[grading] reruns = "first-right"` (grader.grading.reruns) skip those runs.
CONFIGURATIONS = ("each", "any")
VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")
# Format deviations (prefixes of outfile's messages) the spec never rules out: noted, free.
SPEC_SILENT = ("a space after ':'", "a space before ':'", "spaces at a line's start or end",
               "CRLF line ends", "blank lines", "no newline at the end", "unreachable written as")
# The spec's required methods and their share of correctness: bmf is Section 1's kernel in two
# syncs and three orderings, tpe Section 2's two kernels, segscan one variant of bmf.
DEFAULT_WEIGHTS = {"bmf": 3.0, "segscan": 1.0, "tpe": 2.0}


class RubricError(Exception):
    """A rubric that cannot be applied as written; the message names the file and key."""


@dataclass(frozen=True)
class Rubric:
    build: float = 5.0
    clean: float = 5.0
    correctness: float = 36.0
    correctness_partial: str = "fraction"
    method_weights: dict = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))   # required methods
    gate: bool = False                                       # the spec's literal "0 credit if ... fails"
    configurations: str = "each"                             # CONFIGURATIONS: each scored, or any right
    output_format: float = 7.0
    output_partial: str = "fraction"
    accepted_deviations: tuple[str, ...] = SPEC_SILENT      # deviations that cost nothing (prefixes)
    stdout_format: float = 7.0
    stdout_partial: str = "fraction"
    extra_credit: float = 10.0                               # above the maximum, never a deduction
    extra_methods: tuple[str, ...] = ("opt",)
    extra_partial: str = "fraction"
    report: float = 40.0                                     # manual: staff enter it
    report_file: str = "sssp_report.pdf"
    report_min_pages: int = 6
    visibility: str = "visible"
    random_search: float = 0.0          # points for "right on the random small graphs too": 0 = a warning only
    decimals: int = DEFAULT_DECIMALS    # places every score is rounded to, once (grader.grading.points)

    @property
    def code_total(self) -> float:
        return self.build + self.clean + self.correctness + self.output_format + self.stdout_format

    @property
    def total(self) -> float:
        """The maximum every student is scored out of (extra credit comes on top)."""
        return self.code_total + self.report

    @property
    def report_test(self) -> str:
        """The report line's name (a gradebook column; grader.grading.reportscores fills it in)."""
        return f"Report ({self.report_file}, at least {self.report_min_pages} pages before the references): graded by staff"

    def weight(self, method: str) -> float:
        return 0.0 if method in self.extra_methods else float(self.method_weights.get(method, 0.0))


def load_rubric(path: Path | str) -> Rubric:
    path = Path(path)
    raw = read_toml(path, RubricError, "rubric")
    check_keys(raw, {"build", "clean", "correctness", "output_format", "stdout_format", "extra_credit", "report",
                     "random_search", "visibility", "decimals"}, error_class=RubricError, path=path)
    allowed = {"build": {"points"}, "clean": {"points"}, "correctness": {"points", "partial", "methods", "gate", "configurations"},
               "output_format": {"points", "partial", "accept"}, "stdout_format": {"points", "partial"},
               "extra_credit": {"points", "partial", "methods"}, "report": {"points", "file", "min_pages"},
               "random_search": {"points"}}

    def table(name) -> dict:
        value = raw.get(name, {})
        if not isinstance(value, dict):
            raise RubricError(f"{path}: [{name}] must be a table")
        check_keys(value, allowed[name], name, error_class=RubricError, path=path)
        return value

    def points(name, attribute=None) -> float:
        value = table(name).get("points", getattr(Rubric, attribute or name))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise RubricError(f"{path}: {name}.points must be a number >= 0, got {value!r}")
        return float(value)

    def partial(name) -> str:
        value = table(name).get("partial", "fraction")
        if value not in PARTIAL:
            raise RubricError(f"{path}: {name}.partial must be one of {', '.join(PARTIAL)}, got {value!r}")
        return value

    weights = table("correctness").get("methods", DEFAULT_WEIGHTS)
    if not isinstance(weights, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                                                for v in weights.values()):
        raise RubricError(f"{path}: correctness.methods must map method names to weights >= 0")
    gate = table("correctness").get("gate", False)
    if not isinstance(gate, bool):
        raise RubricError(f"{path}: correctness.gate must be true or false, got {gate!r}")
    configurations = table("correctness").get("configurations", "each")
    if configurations not in CONFIGURATIONS:
        raise RubricError(f"{path}: correctness.configurations must be one of {', '.join(CONFIGURATIONS)}, "
                          f"got {configurations!r}")
    extra = table("extra_credit").get("methods", list(Rubric.extra_methods))
    if not isinstance(extra, list) or not all(isinstance(m, str) for m in extra):
        raise RubricError(f"{path}: extra_credit.methods must be a list of method names")
    both = sorted(set(extra) & {m for m, w in weights.items() if w > 0})
    if both:
        raise RubricError(f"{path}: {', '.join(both)} is both required (correctness.methods) and extra credit")
    accepted = table("output_format").get("accept", list(SPEC_SILENT))
    if not isinstance(accepted, list) or not all(isinstance(a, str) for a in accepted):
        raise RubricError(f"{path}: output_format.accept must be a list of strings")
    report = table("report")
    report_file, min_pages = report.get("file", Rubric.report_file), report.get("min_pages", Rubric.report_min_pages)
    if not isinstance(report_file, str) or not report_file or "/" in report_file:
        raise RubricError(f"{path}: report.file must be a file name, got {report_file!r}")
    if isinstance(min_pages, bool) or not isinstance(min_pages, int) or min_pages < 0:
        raise RubricError(f"{path}: report.min_pages must be a whole number >= 0, got {min_pages!r}")
    decimals = raw.get("decimals", DEFAULT_DECIMALS)
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= MAX_DECIMALS:
        raise RubricError(f"{path}: decimals must be a whole number in 0..{MAX_DECIMALS}, got {decimals!r}")
    visibility = raw.get("visibility", "visible")
    if visibility not in VISIBILITY:
        raise RubricError(f"{path}: visibility must be one of {', '.join(VISIBILITY)}")
    return Rubric(build=points("build"), clean=points("clean"), correctness=points("correctness"),
                  correctness_partial=partial("correctness"), method_weights={k: float(v) for k, v in weights.items()},
                  gate=gate, configurations=configurations, output_format=points("output_format"), output_partial=partial("output_format"),
                  accepted_deviations=tuple(accepted), stdout_format=points("stdout_format"),
                  stdout_partial=partial("stdout_format"), extra_credit=points("extra_credit"),
                  extra_methods=tuple(extra), extra_partial=partial("extra_credit"), report=points("report"),
                  report_file=report_file, report_min_pages=min_pages, visibility=visibility,
                  random_search=points("random_search"), decimals=decimals)


def _credit(share: Fraction, partial: str) -> Fraction:
    return share if partial == "fraction" else Fraction(1 if share >= 1 else 0)


def _share(part: int, whole: int) -> Fraction:
    return Fraction(part, whole) if whole else Fraction(0)


def _test(name, score, max_score, output, rubric, **extra) -> dict:
    """score, max_score: exact (Fractions); results_json rounds them once."""
    return {"name": name, "score": exact(score), "max_score": exact(max_score),
            "output": output, "visibility": rubric.visibility, **extra}


def grader_failure(row: dict) -> bool:
    """A run the harness could not carry out (its workers died, an input arrived changed). grade
    runs it once more at once (grader.grading.student.rows_as_they_come); still failing, it is
    scored as not right (never dropped: a dropped run would lift the student's shares and
    escape the gate), its cause in the feedback, and the next `grade` runs it again."""
    return str(row.get("detail", "")).startswith("harness:")


def _ok(row: dict) -> bool:
    return row.get("status") == "ok"


def score(rubric: Rubric, build: dict | None, cells: list, rows: dict, report: dict | None = None) -> list[dict]:
    """Tests for one submission. build: {'built', 'cleaned', 'detail'} or None (not built yet);
    cells: every cell of the matrix for it (also for a refused submission, so every student is
    scored out of the same maximum); rows: run id -> its latest row (missing: not run yet);
    report: what grading found of the report (grader.grading.reportpdf.describe) and staff's score."""
    if rubric.configurations == "any":
        cells = once_per_setting(cells, rows)
    built = bool(build and build.get("built"))
    why = (build or {}).get("detail") or "not built"
    required = [c for c in cells if rubric.weight(c.method) > 0]
    tried = [rows[c.run_id] for c in required if c.run_id in rows] if built else []
    right = [r for r in tried if _ok(r)]
    code = [_test("Build: make sssp produces ./sssp", rubric.build if built else 0, rubric.build,
                  "built" if built else why, rubric)]
    cleaned = bool(build and build.get("cleaned"))
    code.append(_test("make clean removes ./sssp", rubric.clean if cleaned else 0, rubric.clean,
                      "removed" if cleaned else ("make clean left ./sssp behind" if built else "not built"), rubric))
    code += _correctness(rubric, required, rows, built)
    code.append(_output_format(rubric, tried, right))
    code.append(_timing_lines(rubric, tried, right))
    failed = [r for r in tried if not _ok(r)]
    if rubric.gate and failed:
        code = [{**t, "score": Fraction(0), "output": f"0: the spec's rule (\"0 credit if ... your code fails correctness "
                                               f"tests\"): {len(failed)} of {len(tried)} required runs not right\n"
                                               + t["output"]} for t in code]
    tests = code + [_extra_credit(rubric, cells, rows, built, gated=bool(rubric.gate and failed))]
    if rubric.report > 0:
        tests.append(_report_test(rubric, report or {}))
    return tests


def setting(cell) -> tuple:
    """What a cell is apart from its configuration (bsize x bcount)."""
    return (cell.graph, cell.method, cell.sync, cell.ordering, cell.rep)


def once_per_setting(cells: list, rows: dict) -> list:
    """configurations = "any": one cell per setting, in the matrix's order: its first right run's,
    else its first run's, else (nothing run) its first cell."""
    groups: dict[tuple, list] = {}
    for cell in cells:
        groups.setdefault(setting(cell), []).append(cell)
    chosen = []
    for group in groups.values():
        ran = [c for c in group if c.run_id in rows]
        chosen.append(next((c for c in ran if _ok(rows[c.run_id])), ran[0] if ran else group[0]))
    return chosen


def _correctness(rubric: Rubric, required: list, rows: dict, built: bool) -> list[dict]:
    pairs: dict[tuple[str, str], list] = {}
    for cell in required:
        pairs.setdefault((cell.method, cell.graph), []).append(cell)
    total_weight = sum(exact(rubric.weight(method)) for method, _ in pairs) or Fraction(1)
    tests = []
    for (method, graph), group in pairs.items():
        max_points = exact(rubric.correctness) * exact(rubric.weight(method)) / total_weight
        text = _runs_text(group, rows) if built else "not built"
        if rubric.configurations == "any":
            text += "\n(each ordering and sync counted once: right when right at any configuration)"
        tests.append(_test(f"{method} correct on {graph}", max_points * _share_right(group, rows, built, rubric.correctness_partial),
                           max_points, text, rubric))
    return tests


def _share_right(group: list, rows: dict, built: bool, partial: str) -> Fraction:
    if not built or not group:
        return Fraction(0)
    ok = sum(1 for c in group if c.run_id in rows and _ok(rows[c.run_id]))
    return _credit(_share(ok, len(group)), partial)


def _runs_text(group: list, rows: dict) -> str:
    done = [rows[c.run_id] for c in group if c.run_id in rows]
    ok = sum(1 for r in done if _ok(r))
    lines = [f"{ok} of {len(group)} runs right" + (f" ({len(group) - len(done)} not run yet)" if len(done) < len(group) else "")]
    for row in done:
        if not _ok(row):
            what = ("the grader could not judge this run (its failure, not your program's)" if grader_failure(row)
                    else row.get('distances', row['status']))
            lines.append(f"- {row['ordering']} {row['bsize']}x{row['bcount']} {row['sync']}: "
                         f"{what}: {str(row.get('detail', ''))[:300]}")
    return "\n".join(lines)


def _gated_note(tried: list, right: list) -> str:
    wrong = len(tried) - len(right)
    return (f"\n(only runs with right distances earn these points; {wrong} of {len(tried)} runs did not have them)"
            if wrong else "")


def _output_format(rubric: Rubric, tried: list, right: list) -> dict:
    good = [r for r in right if r.get("output_deviations") is not None and not _costly(r["output_deviations"], rubric)]
    share = _share(len(good), len(tried))
    seen = sorted({d for r in tried for d in (r.get("output_deviations") or [])})
    costly = [d for d in seen if not _accepted(d, rubric)]
    free = [d for d in seen if _accepted(d, rubric)]
    return _test("Output file format (<vertex>:<distance> lines from 0:0, in order)",
                 exact(rubric.output_format) * _credit(share, rubric.output_partial), rubric.output_format,
                 f"{len(good)} of {len(tried)} runs wrote right distances in the spec's format" + _gated_note(tried, right)
                 + "".join(f"\n- {d}" for d in costly)
                 + "".join(f"\n- noted, no cost (the spec does not rule it out): {d}" for d in free), rubric)


def _timing_lines(rubric: Rubric, tried: list, right: list) -> dict:
    good = [r for r in right if r.get("stdout_format") == "ok"]
    share = _share(len(good), len(tried))
    problems = sorted({p for r in tried for p in (r.get("stdout_problems") or [])})
    return _test("Timing lines on stdout (the spec's two lines)",
                 exact(rubric.stdout_format) * _credit(share, rubric.stdout_partial), rubric.stdout_format,
                 f"{len(good)} of {len(tried)} runs printed both lines as the spec words them, with right distances"
                 + _gated_note(tried, right) + "".join(f"\n- {p}" for p in problems[:10]), rubric)


def _extra_credit(rubric: Rubric, cells: list, rows: dict, built: bool, gated: bool) -> dict:
    """max_score 0: the points come on top of the maximum (Gradescope takes a score above it)."""
    extra = [c for c in cells if c.method in rubric.extra_methods]
    names = ", ".join(rubric.extra_methods) or "none"
    name = f"Extra credit: {names} correct (up to {rubric.extra_credit:g} points above the maximum)"
    if not extra:
        return _test(name, 0, 0, f"{names} not in the grading matrix: nothing to add, nothing lost", rubric)
    share = Fraction(0) if gated else _share_right(extra, rows, built, rubric.extra_partial)
    done = [rows[c.run_id] for c in extra if c.run_id in rows] if built else []
    ok = sum(1 for r in done if _ok(r))
    text = (f"{ok} of {len(extra)} runs right" + ("; 0 under the spec's gate" if gated else "")
            + ("; a missing or failing optimization costs nothing" if ok < len(extra) else ""))
    return _test(name, exact(rubric.extra_credit) * share, 0, text, rubric)


def _report_test(rubric: Rubric, report: dict) -> dict:
    entered = report.get("score")
    lines = [report.get("found") or f"no {rubric.report_file} found"]
    if report.get("comment"):
        lines.append(f"staff: {report['comment']}")
    lines.append(f"score entered by staff: {entered:g} of {rubric.report:g}" if entered is not None
                 else "pending: staff enter this score (README: \"Grading a class\")")
    return _test(rubric.report_test, exact(entered or 0), rubric.report, "\n".join(lines), rubric,
                 extra_data={"manual": True, "entered": entered is not None})


def _accepted(deviation: str, rubric: Rubric) -> bool:
    return any(deviation.startswith(prefix) for prefix in rubric.accepted_deviations)


def _costly(deviations: list[str], rubric: Rubric) -> bool:
    return any(not _accepted(d, rubric) for d in deviations)
