"""``make mutants-grader``: the strength of the tests that guard the grader's trust-critical
Python, measured by mutmut (mutants nobody on the team wrote) rather than by our own list.

    python3 -m benchmarks.mutants_grader                        # every module of MODULES
    python3 -m benchmarks.mutants_grader --only grader/sweep/check.py
    python3 -m benchmarks.mutants_grader --sample 60 --floor 0.70   # CI: a fixed sample, a floor

Why mutmut (3.x) and not cosmic-ray: mutmut records which tests reach each function (its
"stats" pass) and runs a mutant against those tests only, forked from a warm process, so a
module's mutants cost seconds, not a suite run each; cosmic-ray runs a whole test command per
mutant and needs a session database and a distributor set up around it.

The run happens in a copy of the tree (never the working tree): the copy gets a
``[tool.mutmut]`` table naming the modules and the test files that guard them (SELECTIONS),
mutmut generates and runs the mutants there, and its results are read back with ``mutmut
results --all true``. Mutants argued equivalent (no test can tell them from the original)
are listed, with the argument, in benchmarks/mutants_grader_equivalent.txt and left out of
the score. A sample is every k-th mutant name in sorted order from a seed offset, so the
same tree gives the same sample on any machine.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "benchmarks" / "mutants_grader_equivalent.txt"

# test_exact_scores.py without its one test that builds and grades a class (tens of seconds per mutant)
EXACT_SCORES_PURE = tuple(f"tests/test_exact_scores.py::{t}" for t in (
    "test_rounding_is_once_half_up_and_idempotent", "test_right_on_one_graph_of_three_totals_exactly_30",
    "test_the_rubric_states_its_decimals", "test_cells_a_spreadsheet_would_evaluate_are_defused_and_read_back"))
# module -> the test files (or test ids) that guard it (mutmut narrows them per function by coverage)
SELECTIONS: dict[str, tuple[str, ...]] = {
    "grader/sweep/check.py": ("tests/test_check.py", "tests/test_check_detail.py", "tests/test_runner.py",
                              "tests/test_bounds_judge.py"),
    # the pure tests only: test_bounds_judge's other tests run hostile programs in cells, seconds per mutant
    "grader/sweep/outfile.py": ("tests/test_outfile.py", "tests/test_check.py", "tests/test_check_detail.py"),
    "grader/sweep/timings.py": ("tests/test_timings.py", "tests/test_check.py", "tests/test_check_detail.py",
                                *(f"tests/test_bounds_judge.py::{t}" for t in (
                                    "test_the_blanks_line_is_judged_on_one_capped_line_by_patterns_that_cannot_nest",
                                    "test_a_time_out_of_range_is_unreadable_not_a_failure"))),
    "grader/sweep/identity.py": ("tests/test_identity.py", "tests/test_cells.py", "tests/test_input_identity.py"),
    "grader/sweep/store.py": ("tests/test_store.py", "tests/test_store_lock.py"),
    # test_grade_spec.py grades whole classes (minutes) and is interrupted (exit 130) under mutmut's stats
    # runner: test_rubric.py holds its rubric cases as pure ones
    "grader/grading/rubric.py": ("tests/test_rubric.py", "tests/test_layouts.py", *EXACT_SCORES_PURE),
    "grader/grading/points.py": ("tests/test_exact_scores.py",),
    "grader/grading/gradebook.py": ("tests/test_gradebook.py", "tests/test_layouts.py", "tests/test_lms.py",
                                    *EXACT_SCORES_PURE),
    "grader/grading/spreadsheet.py": ("tests/test_exact_scores.py", "tests/test_lms.py"),
    "grader/grading/layouts.py": ("tests/test_layouts.py", "tests/test_layouts_names.py"),
    "grader/grading/submission.py": ("tests/test_submission.py", "tests/test_layouts.py", "tests/test_unpack_hostile.py"),
    "grader/grading/student_files.py": ("tests/test_unpack_hostile.py",),
    "grader/grading/built_tree.py": ("tests/test_unpack_hostile.py",),
    "grader/jail/boundary.py": ("tests/test_unpack_hostile.py", "tests/test_submission.py"),
    "grader/jail/seccomp.py": ("tests/test_seccomp.py",),
    "grader/jail/bwrap.py": ("tests/test_jail.py", "tests/test_jail_isolation.py", "tests/test_seccomp.py"),
    "grader/jail/uids.py": ("tests/test_uids.py",),     # test_jail/test_sandbox reach it only through whole jails
    "grader/jail/cgroups.py": ("tests/test_sandbox.py", "tests/test_memory_cap.py"),
    "grader/jail/runner.py": ("tests/test_runner.py",),
    "grader/jail/sandbox.py": ("tests/test_sandbox.py", "tests/test_runner.py"),
    "reference/solver.py": ("tests/test_reference.py", "tests/test_reference_strength.py"),
    "reference/exact.py": ("tests/test_reference_exact.py", "tests/test_reference_strength.py"),
    "reference/cache.py": ("tests/test_reference_cache.py", "tests/test_reference_strength.py"),
}
# what the copy needs besides the mutated packages (mutmut copies source_paths itself)
ALSO_COPY = ("sssp_gpu/", "report/", "configs/", "benchmarks/", "examples/", "sssp.py", "apsp.py", "Makefile",
             "sssp", "apsp")
STATUS = re.compile(r"^\s*(\S+): (.+?)\s*$")
KILLED = {"killed", "timeout", "segfault"}            # the tests did not pass: the mutant was caught
SCORED = KILLED | {"survived", "no tests", "suspicious"}


def equivalent_names(path: Path = EQUIVALENT) -> set[str]:
    """Names argued equivalent: the first word of each non-comment line."""
    if not path.exists():
        return set()
    return {line.split()[0] for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")}


def sample(names: list[str], size: int | None, seed: int) -> list[str]:
    """Every k-th name in sorted order from offset seed % k: the same names on every machine."""
    ordered = sorted(names)
    if not size or size >= len(ordered):
        return ordered
    step = len(ordered) / size
    return [ordered[int((seed % max(1, int(step))) + i * step) % len(ordered)] for i in range(size)]


def score(statuses: dict[str, str], equivalent: set[str]) -> tuple[float, Counter, list[str]]:
    """(share caught among the scored mutants, count by status, survivors) without the equivalents."""
    counted = {n: s for n, s in statuses.items() if n not in equivalent and s in SCORED}
    tally = Counter(counted.values())
    caught = sum(tally[s] for s in KILLED)
    survivors = sorted(n for n, s in counted.items() if s not in KILLED)
    return (caught / len(counted) if counted else 1.0), tally, survivors


def module_of(name: str) -> str:
    """grader.sweep.check.x_parse__mutmut_3 -> grader/sweep/check.py"""
    dotted = name.split(".x_")[0].split(".xǁ")[0]
    return dotted.replace(".", "/") + ".py"


def _copy_tree(dest: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for rel in [r for r in listed if r] + ["sssp", "apsp"]:
        source = ROOT / rel
        if not source.is_file():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)


def _configure(copy: Path, modules: list[str]) -> None:
    tests = sorted({t for m in modules for t in SELECTIONS[m]})
    listed = lambda items: "[" + ", ".join(f'"{i}"' for i in items) + "]"   # noqa: E731
    pyproject = copy / "pyproject.toml"
    text = re.sub(r"(?ms)^\[tool\.mutmut\].*?(?=^\[|\Z)", "", pyproject.read_text())
    text += ("\n[tool.mutmut]\n"
             'source_paths = ["grader/", "reference/", "sssp_common/"]\n'
             f"also_copy = {listed([p for p in ALSO_COPY if (copy / p).exists()])}\n"
             f"only_mutate = {listed(modules)}\n"
             f"pytest_add_cli_args_test_selection = {listed(tests)}\n"
             'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"]\n'
             # the grader's tests make this process a child subreaper (grader.jail.reaper): with mutmut's
             # default fork isolation its main process then reaps the tests' orphans and stops on a pid
             # it does not know; a fork server keeps pytest out of the main process
             'process_isolation = "forkserver"\n')
    pyproject.write_text(text)


def _mutmut(copy: Path, args: list[str], log) -> int:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "SSSP_DEVICE": os.environ.get("SSSP_DEVICE", "cpu")}
    return subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=copy, stdout=log, stderr=subprocess.STDOUT,
                          env=env).returncode


def _statuses(copy: Path) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=copy,
                         capture_output=True, text=True).stdout
    return {m.group(1): m.group(2) for line in out.splitlines() if (m := STATUS.match(line))}


def run(modules: list[str], size: int | None, seed: int, jobs: int, keep: Path | None, out=sys.stdout,
        diffs: Path | None = None, only_names: list[str] | None = None) -> float:
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutants-grader-") as scratch:
        copy = Path(scratch) / "tree"
        _copy_tree(copy)
        _configure(copy, modules)
        with open(Path(scratch) / "mutmut.log", "w") as log:
            names = None
            if only_names:
                names = list(only_names)
            elif size:
                # generate and collect stats only (a name that matches nothing), then run the sample
                _mutmut(copy, ["run", "--max-children", str(jobs), "__no_such_mutant__"], log)
                names = sample(list(_statuses(copy)), size, seed)
            _mutmut(copy, ["run", "--max-children", str(jobs), *(names or [])], log)
        statuses = _statuses(copy)
        if names is not None:
            statuses = {n: statuses.get(n, "not checked") for n in names}
        if keep:
            shutil.copy(Path(scratch) / "mutmut.log", keep)
        if diffs:
            equivalent = equivalent_names()
            shown = [subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=copy, capture_output=True,
                                    text=True).stdout for name, status in sorted(statuses.items())
                     if status == "survived" and name not in equivalent]
            diffs.write_text("\n".join(shown))
    equivalent = equivalent_names()
    share, tally, survivors = score(statuses, equivalent)
    unchecked = sum(1 for s in statuses.values() if s == "not checked")
    if unchecked:   # mutmut stopped early (a test failing on the unmutated tree, a crash): no score to trust
        print(f"mutants_grader: mutmut left {unchecked} of {len(statuses)} mutants not checked "
              f"(its output: --log); the score counts as 0", file=out)
        share = 0.0
    per_module: dict[str, Counter] = {}
    for name, status in statuses.items():
        if name not in equivalent:
            per_module.setdefault(module_of(name), Counter())[status] += 1
    print(f"{'module':<34} {'mutants':>7} {'caught':>7} {'survived':>8} {'score':>6}", file=out)
    for module in sorted(per_module):
        counts = per_module[module]
        scored = sum(counts[s] for s in SCORED)
        caught = sum(counts[s] for s in KILLED)
        print(f"{module:<34} {scored:>7} {caught:>7} {scored - caught:>8} "
              f"{(caught / scored if scored else 1):>6.0%}", file=out)
    unscored = {s: c for s, c in Counter(statuses.values()).items() if s not in SCORED}
    print(f"score: {share:.1%} of {sum(tally.values())} mutants caught ({len(equivalent & set(statuses))} argued "
          f"equivalent, left out{'; not scored: ' + str(unscored) if unscored else ''}); "
          f"{time.monotonic() - began:.0f} s, {jobs} at a time", file=out)
    for name in survivors:
        print(f"  survived: {name}", file=out)
    return share


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.mutants_grader", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated modules of SELECTIONS (default: all)")
    parser.add_argument("--sample", type=int, metavar="N", help="run N mutants, chosen as `sample` says")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--floor", type=float, metavar="SHARE", help="exit 1 when the score is below SHARE")
    parser.add_argument("--log", type=Path, metavar="FILE", help="keep mutmut's own output here")
    parser.add_argument("--diffs", type=Path, metavar="FILE", help="write each survivor's change (mutmut show) here")
    parser.add_argument("--names", type=Path, metavar="FILE",
                        help="run only the mutants named in FILE (one a line, e.g. an earlier run's survivors)")
    args = parser.parse_args(argv)
    modules = args.only.split(",") if args.only else list(SELECTIONS)
    unknown = [m for m in modules if m not in SELECTIONS]
    if unknown:
        print(f"mutants_grader: --only: not a guarded module: {', '.join(unknown)} (known: {', '.join(SELECTIONS)})",
              file=sys.stderr)
        return 2
    if subprocess.run([sys.executable, "-c", "import mutmut"], capture_output=True).returncode:
        print("mutants_grader: mutmut is not installed (pip install 'mutmut>=3.8')", file=sys.stderr)
        return 2
    only_names = None
    if args.names:
        try:
            only_names = [line.split()[0] for line in args.names.read_text().splitlines() if line.strip()]
        except OSError as error:
            print(f"mutants_grader: --names: {args.names}: {error.strerror}", file=sys.stderr)
            return 2
    share = run(modules, args.sample, args.seed, max(1, args.jobs), args.log, diffs=args.diffs, only_names=only_names)
    if args.floor is not None and share < args.floor:
        print(f"mutants_grader: score {share:.1%} is below the floor {args.floor:.0%}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
