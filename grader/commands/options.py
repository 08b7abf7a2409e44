"""Command-line options that several grader commands share (sweep and grade take the same matrix)."""
from __future__ import annotations

from pathlib import Path

from grader.sweep.executors import EXECUTORS

TEMPLATE_HELP = ("command template, overriding the config's: placeholders {sssp} {python} {input} {output} "
                 "{bsize} {bcount} {method} {sync} {usesmem} {ordering} {graph} {rep} {config_dir}, "
                 "e.g. \"{sssp} -input {input} -bsize {bsize} -bcount {bcount} -output {output} "
                 "{method} -sync {sync} -usesmem {usesmem}\"")


def csv_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def add_matrix_arguments(parser, default_config: str = "configs/sweep.toml") -> None:
    """The matrix options sweep and grade share (default_config: the command's, for --help)."""
    parser.add_argument("--config", type=Path, metavar="PATH", help=f"the matrix (default {default_config})")
    parser.add_argument("--scale", metavar="ci|full|X", help="stand-in size: ci, full or a fraction (overrides the config)")
    parser.add_argument("--graphs", type=csv_list, metavar="A,B", help="only these graphs (catalogue names or files)")
    parser.add_argument("--methods", type=csv_list, metavar="A,B", help="only these methods (bmf, segscan, tpe, opt, ...)")
    parser.add_argument("--reps", type=int, metavar="N", help="repetitions per cell")
    parser.add_argument("--timeout", type=float, metavar="S", help="seconds before a run is killed")
    parser.add_argument("--cache-dir", type=Path, metavar="DIR", help="where orderings and stand-ins are cached")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--executor", choices=EXECUTORS, help="where runs go: local (default: one worker process "
                        "per GPU, or one CPU worker) or dask (a Dask cluster; needs --scheduler)")
    parser.add_argument("--workers", type=int, metavar="N", help="local: worker processes (default: one per "
                        "visible GPU; on a CPU-only machine 1, at most 2)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="dask: the scheduler, e.g. tcp://HOST:8786")
