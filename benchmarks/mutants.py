"""``make mutants``: test strength as a number. Each mutant (benchmarks/mutant_list.py) is
planted alone in a copy of the tree (never the working tree), a fast GPU test selection
runs against it, and the table says which were caught; the score is the share caught.

    python3 -m benchmarks.mutants                    # every GPU mutant, on the GPU (make mutants)
    python3 -m benchmarks.mutants --cpu              # the numpy-fallback mutants, CPU tests (checks the harness)
    python3 -m benchmarks.mutants --only a,b --jobs 4 --budget 300
    python3 -m benchmarks.mutants --mutants more.json   # mutants kept elsewhere, same fields
    python3 -m benchmarks.mutants --generated 40        # also a sample of benchmarks/cu_mutants.py's operator mutants

First the unmutated tree runs every selection the mutants use: a selection that fails
there would make its mutants look caught, so they are not judged ("baseline fails", with
what pytest said); the others still are. A mutant is *caught* when
pytest fails (exit 1) or cannot even collect (exit 2, e.g. a kernel that no longer
compiles is a failing test, not this), *survived* when it passes, *timeout* when it runs
past 150 s or the budget (counted as caught: the suite did not pass), *stale* when its
text is no longer in the file (not counted; fix the list). Mutants run in parallel
processes (``--jobs``); a total budget (``--budget`` seconds, after the baseline) stops
starting new ones ("not run", not counted).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python3 benchmarks/mutants.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

from benchmarks import cu_mutants  # noqa: E402
from benchmarks.mutant_list import CPU_MUTANTS, MUTANTS, Mutant  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# made by "make sssp" and git-ignored, but tests run it
GENERATED = ("sssp", "apsp")
COUNTED = ("caught", "timeout", "survived")


@dataclass
class Outcome:
    mutant: Mutant
    verdict: str          # caught | survived | timeout | stale | error | not run | baseline fails
    seconds: float = 0.0
    detail: str = ""


def ignored_by(root: Path):
    """A test for relative paths from the simple forms .gitignore uses here: ``/name`` or
    ``a/b/`` (from the top), ``name/`` (a folder anywhere), ``*.ext`` (a file or folder
    suffix). Used only where git itself cannot list the tree."""
    top, anywhere, suffixes = {(".git",), (".mutant-cache",)}, set(), set()
    try:
        lines = (root / ".gitignore").read_text().splitlines()
    except OSError:
        lines = []
    for line in (raw.strip() for raw in lines):
        if not line or line.startswith("#"):
            continue
        if line.startswith("*."):
            suffixes.add(line[1:].rstrip("/"))
        elif line.startswith("/") or "/" in line.rstrip("/"):
            top.add(tuple(line.strip("/").split("/")))
        else:
            anywhere.add(line.rstrip("/"))

    def ignored(parts: tuple[str, ...]) -> bool:
        return (any(parts[:len(prefix)] == prefix for prefix in top) or bool(anywhere.intersection(parts))
                or any(part.endswith(suffix) for part in parts for suffix in suffixes))

    return ignored


def tree_files(root: Path) -> list[str]:
    """The working tree as git sees it: tracked and untracked-but-not-ignored files (so the
    copy has uncommitted edits), plus the generated launchers. Without git (or .git), every
    file outside the ignored folders."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=root, capture_output=True, check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        ignored = ignored_by(root)
        listed = ["/".join(parts) for parts in (path.relative_to(root).parts for path in root.rglob("*"))
                  if not ignored(parts)]
    names = [name for name in listed if name and (root / name).is_file()]
    return sorted(set(names) | {name for name in GENERATED if (root / name).is_file()})


def copy_tree(root: Path, target: Path) -> Path:
    for name in tree_files(root):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, destination)
    return target


def planted(base: Path, target: Path, mutant: Mutant | None) -> Path | None:
    """A copy of base (hard links: cheap) with the mutant's file rewritten (a new inode, so
    base keeps the original); None when the mutant's text is not in the file exactly once."""
    shutil.copytree(base, target, copy_function=os.link, symlinks=True)
    if mutant is None:
        return target
    path = target / mutant.file
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    if text.count(mutant.old) != 1:
        return None
    path.unlink()
    path.write_text(text.replace(mutant.old, mutant.new))
    return target


def pytest_command(selection: tuple[str, ...], cpu: bool) -> list[str]:
    return [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m",
            "not gpu" if cpu else "gpu", *selection]


def run_selection(tree: Path, selection: tuple[str, ...], cpu: bool, timeout_s: float) -> tuple[str, float, str]:
    """(caught | survived | timeout, seconds, the last lines of pytest's output)."""
    env = {**os.environ, "SSSP_DEVICE": "cpu" if cpu else "gpu", "SSSP_CACHE_DIR": str(tree / ".mutant-cache"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)   # the copy's conftest puts the copy first; nothing else may
    started = time.monotonic()
    try:
        done = subprocess.run(pytest_command(selection, cpu), cwd=tree, env=env, capture_output=True,
                              text=True, timeout=max(1.0, timeout_s), start_new_session=True)
    except subprocess.TimeoutExpired as expired:
        tail = (expired.stdout or b"")[-400:]
        return "timeout", time.monotonic() - started, tail.decode(errors="replace") if isinstance(tail, bytes) else tail
    seconds = time.monotonic() - started
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-3:])
    if done.returncode == 0:
        return "survived", seconds, tail
    if done.returncode in (1, 2):
        return "caught", seconds, tail
    return "error", seconds, f"pytest exit {done.returncode}: {tail}"


def baseline(base: Path, scratch: Path, selections: list[tuple[str, ...]], cpu: bool, jobs: int,
             timeout_s: float) -> dict[tuple[str, ...], str]:
    """Every selection on the unmutated tree: {selection that does not pass: what pytest said}."""
    def one(index_selection):
        index, selection = index_selection
        tree = planted(base, scratch / f"baseline-{index}", None)
        verdict, seconds, tail = run_selection(tree, selection, cpu, timeout_s)
        shutil.rmtree(tree, ignore_errors=True)
        print(f"baseline {' '.join(selection)}: {'passes' if verdict == 'survived' else verdict} "
              f"({seconds:.0f} s)" + ("" if verdict == "survived" else f"\n{tail}"), flush=True)
        return selection, ("" if verdict == "survived" else f"{verdict}: {tail}")

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return {selection: problem for selection, problem in pool.map(one, enumerate(selections)) if problem}


def run_mutants(mutants: list[Mutant], cpu: bool = False, jobs: int = 4, budget_s: float = 300.0,
                per_mutant_s: float = 150.0, check_baseline: bool = True, root: Path = ROOT) -> list[Outcome]:
    with tempfile.TemporaryDirectory(prefix="sssp-mutants-") as scratch_name:
        scratch = Path(scratch_name)
        base = copy_tree(root, scratch / "base")
        # a selection the unmutated tree fails would make its mutants look caught: they are
        # not judged (verdict "baseline fails"), the others still are
        failing = baseline(base, scratch, sorted({m.tests for m in mutants}), cpu, jobs, per_mutant_s) \
            if check_baseline else {}
        deadline = time.monotonic() + budget_s   # the baseline is not counted

        def one(index_mutant) -> Outcome:
            index, mutant = index_mutant
            if mutant.tests in failing:
                return Outcome(mutant, "baseline fails", detail=failing[mutant.tests])
            left = deadline - time.monotonic()
            if left <= 0:
                return Outcome(mutant, "not run", detail="over the budget")
            tree = planted(base, scratch / f"m{index:03d}", mutant)
            if tree is None:
                return Outcome(mutant, "stale", detail=f"the text is not in {mutant.file} exactly once")
            verdict, seconds, tail = run_selection(tree, mutant.tests, cpu, min(per_mutant_s, left))
            shutil.rmtree(tree, ignore_errors=True)
            print(f"  {mutant.name}: {verdict} ({seconds:.0f} s)", flush=True)
            return Outcome(mutant, verdict, seconds, tail)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(one, enumerate(mutants)))


def argued_equivalent(outcome: Outcome) -> bool:
    """A survivor that cu_mutants.EQUIVALENT argues no test can catch (its reason is in the table)."""
    return outcome.verdict == "survived" and outcome.mutant.name in cu_mutants.EQUIVALENT


def score(outcomes: list[Outcome]) -> tuple[int, int]:
    """(caught, judged): a timeout counts as caught; stale, error, not run and survivors argued
    equivalent are not judged."""
    judged = [o for o in outcomes if o.verdict in COUNTED and not argued_equivalent(o)]
    return sum(o.verdict != "survived" for o in judged), len(judged)


def table(outcomes: list[Outcome]) -> str:
    width = max([len(o.mutant.name) for o in outcomes] + [6])
    lines = [f"{'mutant':<{width}}  {'file':<32} {'verdict':<9} {'s':>5}  what it plants",
             "-" * (width + 70)]
    for o in outcomes:
        lines.append(f"{o.mutant.name:<{width}}  {o.mutant.file:<32} {o.verdict:<9} {o.seconds:5.0f}  "
                     f"{o.mutant.description}")
    hand = [o for o in outcomes if not o.mutant.name.startswith(GENERATED_PREFIX)]
    made = [o for o in outcomes if o.mutant.name.startswith(GENERATED_PREFIX)]
    lines.append(score_line("score" if not made else "score, hand-written list", hand))
    if made:
        lines.append(score_line("score, generated operator mutants (benchmarks/cu_mutants.py)", made))
    return "\n".join(lines)


GENERATED_PREFIX = "gen-"


def score_line(label: str, outcomes: list[Outcome]) -> str:
    caught, judged = score(outcomes)
    share = f"{100 * caught / judged:.0f} %" if judged else "n/a"
    others = {v: sum(o.verdict == v for o in outcomes) for v in ("stale", "error", "not run", "baseline fails")}
    others["argued equivalent"] = sum(argued_equivalent(o) for o in outcomes)
    extra = ", ".join(f"{n} {v}" for v, n in others.items() if n)
    return f"{label}: {caught} / {judged} caught ({share})" + (f"; {extra} (not judged)" if extra else "")


def load_extra(path: Path) -> list[Mutant]:
    """Mutants from a JSON list of objects with name, file, old, new, description, tests."""
    try:
        entries = json.loads(path.read_text())
        return [Mutant(e["name"], e["file"], e["old"], e["new"], e.get("description", ""), tuple(e["tests"]))
                for e in entries]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"mutants: {path}: not a JSON list of mutants ({error})") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mutants", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", action="store_true", help="the numpy-fallback mutants, CPU tests")
    parser.add_argument("--only", help="comma-separated mutant names")
    parser.add_argument("--mutants", type=Path, help="a JSON file of more mutants")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("MUTANT_JOBS", "8")),
                        help="mutants at a time (default 8; each is one pytest process on the GPU)")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds for all mutants after the baseline (default 300)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    parser.add_argument("--generated", type=int, default=0, metavar="N",
                        help="also N of the generated operator mutants of the kernels (a fixed sample; GPU only)")
    parser.add_argument("--seed", type=int, default=0, help="which fixed sample of the generated mutants")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--json", type=Path, help="also write the outcomes here")
    args = parser.parse_args(argv)
    mutants = list(CPU_MUTANTS if args.cpu else MUTANTS)
    if args.mutants:
        mutants += load_extra(args.mutants)
    if args.generated and not args.cpu:
        mutants += cu_mutants.sample(cu_mutants.generated(), args.generated, args.seed)
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {m.name for m in mutants}
        if unknown:
            parser.error(f"unknown mutants: {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m.name in wanted]
    if args.list:
        for m in mutants:
            print(f"{m.name:<32} {m.file:<34} {m.description}")
        return 0
    if not args.cpu and os.environ.get("SSSP_DEVICE", "").lower() == "cpu":
        parser.error("the GPU mutants need the GPU (unset SSSP_DEVICE or use --cpu)")
    print(f"{len(mutants)} mutants, {args.jobs} at a time, budget {args.budget:.0f} s", flush=True)
    outcomes = run_mutants(mutants, cpu=args.cpu, jobs=max(1, args.jobs), budget_s=args.budget,
                           check_baseline=not args.no_baseline)
    print(table(outcomes))
    if args.json:
        args.json.write_text(json.dumps([{"name": o.mutant.name, "file": o.mutant.file, "verdict": o.verdict,
                                          "seconds": round(o.seconds, 1), "detail": o.detail} for o in outcomes],
                                        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
