"""`python -m grader report`: sweep results → report.md, report.html and tables.tex.

Why a thin command: the report package holds the logic; this file only finds
the results, says clearly when there are none, and prints what it wrote.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sssp_common.files import REPO_ROOT

HELP = "render tables and plots from results files"
DEFAULT_OUT = Path("report/out")
FORMATS = ("md", "html", "tex")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, nargs="+", metavar="PATH",
                        help="results files (default every results/*.jsonl of this checkout)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR",
                        help="output folder (default report/out)")
    parser.add_argument("--format", default=",".join(FORMATS), metavar="md,html,tex",
                        help="formats to write (default all three)")
    parser.add_argument("--program", metavar="LABEL_OR_ID",
                        help="report only this program (its label or its identity); by default, results of "
                             "several programs give one report per program, in a folder each under --out")
    parser.add_argument("--paper", action="store_true",
                        help="write the paper set instead: one numbered table or figure per question of the spec's "
                             "'What to Report?' (paper.md, paper.html, paper.tex + paper-body.tex for the USENIX "
                             "template, figures/paper-*.png), each caption naming device, graphs, statistic and "
                             "repetitions")
    parser.add_argument("--check-against", type=Path, nargs="+", metavar="PATH",
                        help="results of a rerun of the same sweep: instead of writing a report, list the claims "
                             "of this one that the rerun contradicts (exit 1 if any)")


def run_from_args(args) -> int:
    from sssp_common.errors import UsageError
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise UsageError(f"--format: choose from md, html, tex (got {args.format or 'nothing'})")
    if args.check_against:
        return check_rerun(args.results or default_results(), args.check_against, args.program)
    return run(results=args.results, out_dir=args.out, formats=tuple(formats), program=args.program,
               paper=args.paper)


def check_rerun(first: list[Path], second: list[Path], program: str | None = None, out=None) -> int:
    """Do two runs of one sweep tell the same story? 0: no claim of either is contradicted by the
    other; 1: some is (each printed); 2: no results or no such program."""
    from report.load import ProgramChoiceError, load_results, measured, programs, select_program
    from report.observations import candidates, claims, flips
    out = out or sys.stdout
    frames = []
    for paths in (first, second):
        frame = load_results([p for p in paths if Path(p).is_file()])
        if not len(frame):
            print(f"report: no sweep results in {', '.join(str(p) for p in paths)}", file=sys.stderr)
            return 2
        try:
            chosen = program or (programs(frame)[0][0] if len(programs(frame)) == 1 else None)
            if chosen is None:
                raise ProgramChoiceError("several programs in the results: choose one with --program")
            frames.append(measured(select_program(frame, chosen)))
        except ProgramChoiceError as error:
            print(f"report: {error}", file=sys.stderr)
            return 2
    a, b = candidates(frames[0]), candidates(frames[1])
    contradicted = flips(a, b) + flips(b, a)
    both = set(claims(a)) & set(claims(b))
    print(f"{len(claims(a))} claims in the first run, {len(claims(b))} in the second, {len(both)} made by both; "
          f"{len(contradicted)} contradicted", file=out)
    for line in contradicted:
        print(f"  contradicted: {line}", file=out)
    return 1 if contradicted else 0


def default_results() -> list[Path]:
    return sorted((REPO_ROOT / "results").glob("*.jsonl"))


def run(results: list[Path] | None = None, out_dir: Path = DEFAULT_OUT, formats=FORMATS,
        program: str | None = None, paper: bool = False) -> int:
    """Render the report, or with ``paper`` the paper set (one per program, never two programs in
    one); 1 with one line on stderr when there are no results to report, 2 for an unknown format
    or a --program that matches none."""
    from report.load import ProgramChoiceError, describe_programs, load_results, programs
    from report.render import program_folders, render_reports

    paths = [Path(p) for p in results] if results else default_results()
    where = ", ".join(str(p) for p in paths) if results else str(REPO_ROOT / "results" / "*.jsonl")
    existing = [p for p in paths if p.is_file()]
    frame = load_results(existing) if existing else None
    if frame is None or len(frame) == 0:
        print(f"report: no sweep results in {where}; run python -m grader sweep first", file=sys.stderr)
        return 1
    for path in paths:
        if not path.is_file():
            print(f"report: warning: {path} does not exist; reporting the other results files", file=sys.stderr)
    present = programs(frame)
    if len(present) > 1 and not program:
        folders = program_folders(frame)
        print(f"report: the results hold {len(present)} programs ({describe_programs(present)}); writing one "
              f"report per program under {out_dir}: {', '.join(folders[key] for key, _, _ in present)} "
              "(--program LABEL_OR_ID for one)", file=sys.stderr)
    try:
        write = None
        if paper:
            from report.paperset_render import render_paper as write
        written = render_reports(frame, existing, Path(out_dir), tuple(formats), program, write)
    except ProgramChoiceError as error:
        print(f"report: {error}", file=sys.stderr)
        return 2
    except ValueError as error:  # an unknown format name
        print(f"report: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0
