"""`python -m grader`: the command line; each subcommand is a plain run() in grader/commands/.

Only argparse lives here: subcommand modules are imported when chosen, so --help is
instant and a module that is missing or broken is named in one line.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

EPILOG = """\
examples:
  python -m grader sweep                          the default matrix (configs/sweep.toml), resumable
  python -m grader sweep --dry-run                list the cells and which are already done
  python -m grader sweep --config configs/full.toml --scale full     the spec's sizes, on a GPU
  python -m grader sweep --graphs figure1,rome99 --methods bmf,tpe --reps 3
  python -m grader sweep --rerun-failed           redo only the runs that were not ok
  python -m grader sweep --config configs/sample-package.toml --program "/path/to/sssp --input {input} ..."
  python -m grader report                         report/out/report.md, report.html, tables.tex
  python -m grader fetch roadNet-CA               download, verify, unpack (needs a network)
  python -m grader synth all --scale 0.1          deterministic stand-ins for the big graphs

exit status: 0 all ok; 1 some run not ok or a failure; 2 bad usage or config; 130 interrupted
"""

TEMPLATE_HELP = ("command template, overriding the config's: placeholders {sssp} {python} {input} {output} "
                 "{bsize} {bcount} {method} {sync} {usesmem} {ordering} {graph} {rep} {config_dir}, "
                 "e.g. \"{sssp} -input {input} -bsize {bsize} -bcount {bcount} -output {output} "
                 "{method} -sync {sync} -usesmem {usesmem}\"")


class UsageError(Exception):
    """A bad argument value: one line, exit 2."""


def _csv(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m grader",
        description="Sweep an sssp program over graphs, block configurations, edge orderings, methods and "
                    "sync modes; check every output against a trusted reference; report the results.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    sweep = commands.add_parser(
        "sweep", help="run a sweep matrix, checking every output (resumes where it stopped)",
        description="Run every cell of a sweep matrix, check each output against the reference, append one "
                    "JSON line per run to the results file. A rerun skips cells already recorded.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sweep.add_argument("--config", type=Path, metavar="PATH", help="sweep matrix (default configs/sweep.toml)")
    sweep.add_argument("--scale", metavar="ci|full|X", help="stand-in size: ci, full or a fraction (overrides the config)")
    sweep.add_argument("--program", metavar="TEMPLATE", help=TEMPLATE_HELP)
    sweep.add_argument("--results", type=Path, metavar="PATH", help="results file (default results/<config name>.jsonl)")
    sweep.add_argument("--force", action="store_true", help="run every cell again, even those already recorded")
    sweep.add_argument("--rerun-failed", action="store_true", help="run again the cells whose latest result is not ok")
    sweep.add_argument("--graphs", type=_csv, metavar="A,B", help="only these graphs (catalogue names or files)")
    sweep.add_argument("--methods", type=_csv, metavar="A,B", help="only these methods (bmf, segscan, tpe, opt)")
    sweep.add_argument("--reps", type=int, metavar="N", help="repetitions per cell")
    sweep.add_argument("--timeout", type=float, metavar="S", help="seconds before a run is killed")
    sweep.add_argument("--cache-dir", type=Path, metavar="DIR", help="where orderings and stand-ins are cached")
    sweep.add_argument("--dry-run", action="store_true", help="list the cells (done or to do) and stop")
    sweep.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    report = commands.add_parser("report", help="render tables and plots from results files",
                                 description="Render report.md, report.html and tables.tex from sweep results.")
    report.add_argument("--results", type=Path, nargs="+", metavar="PATH",
                        help="results files (default every results/*.jsonl)")
    report.add_argument("--out", type=Path, default=Path("report/out"), metavar="DIR", help="output folder (default report/out)")
    report.add_argument("--format", type=_csv, default=["md", "html", "tex"], metavar="md,html,tex",
                        help="formats to write (default all three)")

    fetch = commands.add_parser("fetch", help="download, verify and unpack catalogue graphs",
                                description="Download the named graphs, verify size/counts/checksum and unpack.")
    fetch.add_argument("names", nargs="+", metavar="NAME", help="catalogue names, e.g. roadNet-CA")
    fetch.add_argument("--data-dir", type=Path, metavar="DIR", help="where to put them")
    fetch.add_argument("--force", action="store_true", help="download again even when present")

    synth = commands.add_parser("synth", help="write deterministic stand-ins for the big graphs",
                                description="Write stand-ins with the size and shape of the spec's graphs.")
    synth.add_argument("names", nargs="+", metavar="NAME", help="stand-in names (e.g. roadNet-CA~synth) or 'all'")
    synth.add_argument("--out", type=Path, default=Path("data/synth"), metavar="DIR", help="output folder (default data/synth)")
    synth.add_argument("--scale", default="full", metavar="ci|full|X", help="size: ci, full or a fraction (default full)")
    synth.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    return parser


def dispatch(args: argparse.Namespace) -> int:
    """Map the parsed arguments onto the subcommand's run(...)."""
    module = _command_module(args.command)
    if args.command == "sweep":
        return module.run(config=args.config, scale=args.scale, program=args.program, results=args.results,
                          force=args.force, rerun_failed=args.rerun_failed, graphs=args.graphs,
                          methods=args.methods, reps=args.reps, timeout=args.timeout, dry_run=args.dry_run,
                          quiet=args.quiet, cache_dir=args.cache_dir)
    if args.command == "report":
        unknown = [f for f in args.format if f not in ("md", "html", "tex")]
        if unknown or not args.format:
            raise UsageError(f"--format: choose from md, html, tex (got {','.join(args.format) or 'nothing'})")
        return module.run(results=args.results, out_dir=args.out, formats=tuple(args.format))
    if args.command == "fetch":
        return module.run(names=args.names, data_dir=args.data_dir, force=args.force)
    if args.command == "synth":
        from grader.config import ConfigError, parse_scale
        try:
            scale = parse_scale(args.scale, "--scale")
        except ConfigError as error:
            raise UsageError(str(error)) from None
        return module.run(names=args.names, out_dir=args.out, scale=scale, seed=args.seed)
    raise UsageError(f"unknown command {args.command!r}")


def _command_module(name: str):
    try:
        return importlib.import_module(f"grader.commands.{name}")
    except ModuleNotFoundError as error:
        if error.name in (f"grader.commands.{name}", "grader.commands", "grader"):
            raise UsageError(f"the '{name}' command is not available in this checkout "
                             f"(grader/commands/{name}.py is missing)") from None
        raise UsageError(f"the '{name}' command needs the Python module '{error.name}', "
                         f"which is not installed") from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        code = dispatch(args)
    except UsageError as error:
        print(f"python -m grader {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError) as error:   # a user-level problem (a path, a value): one line
        if os.environ.get("GRADER_DEBUG"):
            raise
        print(f"python -m grader {args.command}: {error} (GRADER_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
