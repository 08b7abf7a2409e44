"""Scores from a rubric (configs/rubric.toml): points for the build, `make clean`, each method's
correctness on each graph, the output file's format and the timing lines, with partial
credit as the rubric says; the tests come out in Gradescope's results.json shape.

Pure: build facts and run records in, a list of tests out.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from grader.tomlfile import check_keys, read_toml

PARTIAL = ("fraction", "all")
VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")


class RubricError(Exception):
    """A rubric that cannot be applied as written; the message names the file and key."""


@dataclass(frozen=True)
class Rubric:
    build: float = 10.0
    clean: float = 5.0
    correctness: float = 60.0
    correctness_partial: str = "fraction"
    method_weights: dict = field(default_factory=dict)     # method -> weight (default 1)
    output_format: float = 10.0
    output_partial: str = "fraction"
    accepted_deviations: tuple[str, ...] = ()                # deviations that cost nothing (prefixes)
    stdout_format: float = 10.0
    stdout_partial: str = "fraction"
    visibility: str = "visible"

    @property
    def total(self) -> float:
        return self.build + self.clean + self.correctness + self.output_format + self.stdout_format


def load_rubric(path: Path | str) -> Rubric:
    path = Path(path)
    raw = read_toml(path, RubricError, "rubric")
    check_keys(raw, {"build", "clean", "correctness", "output_format", "stdout_format", "visibility"},
               error_class=RubricError, path=path)

    def table(name) -> dict:
        value = raw.get(name, {})
        if not isinstance(value, dict):
            raise RubricError(f"{path}: [{name}] must be a table")
        return value

    def points(name) -> float:
        value = table(name).get("points", getattr(Rubric, name) if name != "correctness" else Rubric.correctness)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise RubricError(f"{path}: {name}.points must be a number >= 0, got {value!r}")
        return float(value)

    def partial(name) -> str:
        value = table(name).get("partial", "fraction")
        if value not in PARTIAL:
            raise RubricError(f"{path}: {name}.partial must be one of {', '.join(PARTIAL)}, got {value!r}")
        return value

    weights = table("correctness").get("methods", {})
    if not isinstance(weights, dict) or not all(isinstance(v, (int, float)) and v >= 0 for v in weights.values()):
        raise RubricError(f"{path}: correctness.methods must map method names to weights >= 0")
    accepted = table("output_format").get("accept", [])
    if not isinstance(accepted, list) or not all(isinstance(a, str) for a in accepted):
        raise RubricError(f"{path}: output_format.accept must be a list of strings")
    visibility = raw.get("visibility", "visible")
    if visibility not in VISIBILITY:
        raise RubricError(f"{path}: visibility must be one of {', '.join(VISIBILITY)}")
    return Rubric(build=points("build"), clean=points("clean"), correctness=points("correctness"),
                  correctness_partial=partial("correctness"), method_weights=dict(weights),
                  output_format=points("output_format"), output_partial=partial("output_format"),
                  accepted_deviations=tuple(accepted), stdout_format=points("stdout_format"),
                  stdout_partial=partial("stdout_format"), visibility=visibility)


def _credit(share: float, partial: str) -> float:
    return share if partial == "fraction" else (1.0 if share >= 1.0 else 0.0)


def _test(name, score, max_score, output, rubric) -> dict:
    return {"name": name, "score": round(score, 4), "max_score": round(max_score, 4),
            "output": output, "visibility": rubric.visibility}


def score(rubric: Rubric, build: dict | None, cells: list, rows: dict) -> list[dict]:
    """Tests for one submission. build: {'built', 'cleaned', 'detail'} or None (not built yet);
    cells: every cell of the matrix for it; rows: run id -> its latest row (missing: not run yet)."""
    tests = []
    built = bool(build and build.get("built"))
    why = (build or {}).get("detail") or "not built"
    tests.append(_test("Build: make sssp produces ./sssp", rubric.build if built else 0, rubric.build,
                       "built" if built else why, rubric))
    cleaned = bool(build and build.get("cleaned"))
    tests.append(_test("make clean removes ./sssp", rubric.clean if cleaned else 0, rubric.clean,
                       "removed" if cleaned else ("make clean left ./sssp behind" if built else "not built"), rubric))
    pairs: dict[tuple[str, str], list] = {}
    for cell in cells:
        pairs.setdefault((cell.method, cell.graph), []).append(cell)
    weight = {pair: float(rubric.method_weights.get(pair[0], 1.0)) for pair in pairs}
    total_weight = sum(weight.values()) or 1.0
    for (method, graph), group in pairs.items():
        max_points = rubric.correctness * weight[(method, graph)] / total_weight
        done = [rows[c.run_id] for c in group if c.run_id in rows]
        ok = sum(1 for r in done if r.get("status") == "ok")
        lines = [f"{ok} of {len(group)} runs right" + (f" ({len(group) - len(done)} not run yet)" if len(done) < len(group) else "")]
        for row in done:
            if row.get("status") != "ok":
                lines.append(f"- {row['ordering']} {row['bsize']}x{row['bcount']} {row['sync']}: "
                             f"{row.get('distances', row['status'])}: {str(row.get('detail', ''))[:300]}")
        share = ok / len(group) if group and built else 0.0
        tests.append(_test(f"{method} correct on {graph}", max_points * _credit(share, rubric.correctness_partial),
                           max_points, "\n".join(lines if built else ["not built"]), rubric))
    judged = [r for r in rows.values() if r.get("output_deviations") is not None]
    exact = [r for r in judged if not _costly(r["output_deviations"], rubric)]
    seen = sorted({d for r in judged for d in r["output_deviations"]})
    share = len(exact) / len(judged) if judged else 0.0
    tests.append(_test("Output file format (<vertex>:<distance>, INF, in order from 0:0)",
                       rubric.output_format * _credit(share, rubric.output_partial), rubric.output_format,
                       f"{len(exact)} of {len(judged)} output files in the spec's format"
                       + ("".join(f"\n- {d}" + (" (accepted)" if _accepted(d, rubric) else "") for d in seen)), rubric))
    ran = [r for r in rows.values() if r.get("stdout_format") is not None and r.get("distances") != "timeout"]
    good = [r for r in ran if r.get("stdout_format") == "ok"]
    problems = sorted({p for r in ran for p in (r.get("stdout_problems") or [])})
    share = len(good) / len(ran) if ran else 0.0
    tests.append(_test("Timing lines on stdout (the spec's two lines)",
                       rubric.stdout_format * _credit(share, rubric.stdout_partial), rubric.stdout_format,
                       f"{len(good)} of {len(ran)} runs printed both lines as the spec words them"
                       + "".join(f"\n- {p}" for p in problems[:10]), rubric))
    return tests


def _accepted(deviation: str, rubric: Rubric) -> bool:
    return any(deviation.startswith(prefix) for prefix in rubric.accepted_deviations)


def _costly(deviations: list[str], rubric: Rubric) -> bool:
    return any(not _accepted(d, rubric) for d in deviations)
