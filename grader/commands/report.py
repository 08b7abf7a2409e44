"""`python -m grader report`: sweep results → report.md, report.html and tables.tex.

Why a thin command: the report package holds the logic; this file only finds
the results, says clearly when there are none, and prints what it wrote.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

DEFAULT_OUT = Path("report/out")


def repo_root(start: Path | None = None) -> Path:
    """The git checkout around the current directory (or this file's checkout when not in one)."""
    start = Path(start or Path.cwd())
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=start, capture_output=True,
                             text=True, timeout=10)
        if top.returncode == 0 and top.stdout.strip():
            return Path(top.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return Path(__file__).resolve().parents[2]


def default_results() -> list[Path]:
    return sorted((repo_root() / "results").glob("*.jsonl"))


def run(results: list[Path] | None = None, out_dir: Path = DEFAULT_OUT, formats=("md", "html", "tex")) -> int:
    """Render the report; 1 with one line on stderr when there are no results to report."""
    from report.load import load_results
    from report.render import render_all

    paths = [Path(p) for p in results] if results else default_results()
    where = ", ".join(str(p) for p in paths) if results else str(repo_root() / "results" / "*.jsonl")
    existing = [p for p in paths if p.is_file()]
    frame = load_results(existing) if existing else None
    if frame is None or len(frame) == 0:
        print(f"report: no sweep results in {where}; run python -m grader sweep first", file=sys.stderr)
        return 1
    missing = [p for p in paths if not p.is_file()]
    for path in missing:
        print(f"report: warning: {path} does not exist; reporting the other results files", file=sys.stderr)
    try:
        written = render_all(frame, existing, Path(out_dir), tuple(formats))
    except ValueError as error:  # an unknown format name
        print(f"report: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The report command's options, for grader/__main__.py's sub-parser."""
    parser.add_argument("--results", type=Path, nargs="+", default=None,
                        help="results JSONL files (default: every results/*.jsonl in this checkout)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: report/out)")
    parser.add_argument("--formats", default="md,html,tex", help="comma-separated subset of md,html,tex")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader report", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run(args.results, args.out, tuple(f for f in args.formats.split(",") if f))


if __name__ == "__main__":
    sys.exit(main())
