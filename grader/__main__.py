"""`python -m grader`: dispatch to a subcommand; each lives in grader/commands/ with its own parser.

Every command module has ``HELP`` (one line), ``add_arguments(parser)`` and
``run_from_args(args) -> int`` over a plain ``run(...)`` (asv's commands are the model).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

COMMANDS = ("sweep", "grade", "shrink", "report", "fetch", "synth")

EPILOG = """\
examples:
  python -m grader sweep                          the default matrix (configs/sweep.toml), resumable
  python -m grader sweep --dry-run                list the cells and which are already done
  python -m grader grade submissions/ --out graded/     grade a class's submissions
  python -m grader shrink --program P --graph G --method tpe --sync incore
                                                  the smallest graph program P gets wrong
  python -m grader report                         report/out/report.md, report.html, tables.tex
  python -m grader fetch roadNet-CA               download, verify, unpack (needs a network)
  python -m grader synth all --scale 0.1          deterministic stand-ins for the big graphs

`python -m grader COMMAND --help` lists a command's options.
exit status: 0 all ok; 1 some run not ok or a failure; 2 bad usage or config; 130 interrupted
  (grade: 0 every submission graded, whatever its score; 1 not one run of any submission right)
"""


from sssp_common.errors import UsageError  # noqa: E402  (a bad argument value: one line, exit 2)


def _command_module(name: str):
    try:
        return importlib.import_module(f"grader.commands.{name}")
    except ModuleNotFoundError as error:
        if error.name in (f"grader.commands.{name}", "grader.commands", "grader"):
            return None
        raise UsageError(f"the '{name}' command needs the Python module '{error.name}', "
                         f"which is not installed") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m grader",
        description="Sweep an sssp program over graphs, block configurations, edge orderings, methods and "
                    "sync modes; grade students' submissions; check every output against a trusted "
                    "reference; report the results.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = _command_module(name)
        if module is None:
            continue
        sub = commands.add_parser(name, help=module.HELP, description=module.__doc__.split("\n\n")[0],
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(sub)
        sub.set_defaults(module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
    except UsageError as error:
        print(f"python -m grader: {error}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        code = args.module.run_from_args(args)
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
