"""The command line, in both forms the course uses.

Spec form (positional method):  sssp -input F -bsize 512 -bcount 4 -output out.txt bmf -sync incore
Course sample form:             sssp --input F --bsize 512 --bcount 4 --output out.txt --method bmf
                                     --sync incore --usesmem yes
Flags take one or two dashes and come in any order.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from sssp_common.errors import DeviceError, InputError, UsageError
from .methods.common import METHODS, SYNCS, Run

USAGE = """\
usage: sssp -input FILE -bsize N -bcount N -output FILE METHOD -sync incore|outcore [-usesmem yes|no]
       sssp --input FILE --bsize N --bcount N --output FILE --method METHOD --sync incore|outcore [--usesmem yes|no]

  -input FILE      edge list: lines "src dst [weight]" (weight 1 if absent), '#' comments;
                   or a DIMACS .gr file; either may be gzipped (.gz). Source vertex: 0.
  -bsize N         threads per block: 32..1024, a multiple of 32
  -bcount N        blocks: 1..1048576 (the spec's configurations: 256x8 384x5 512x4 768x2 1024x2)
  -output FILE     where to write "<vertex>:<distance>" lines (INF if unreachable)
  METHOD           bmf (Bellman-Ford), tpe (to-process-edge filtering), opt (our optimisation)
  -sync MODE       outcore (distance_prev/distance_cur, swapped per round) or incore (one array)
  -usesmem yes|no  bmf only: the shared-memory segmented-scan kernel (segscan); out-of-core,
                   for edge lists sorted by destination (other orders work, more slowly)

Without a CUDA GPU (or with SSSP_DEVICE=cpu) the same method runs in numpy on the CPU.
Exit status: 0 ok, 1 bad input file, 2 bad command line, 3 device failure."""

FLAGS = ("input", "bsize", "bcount", "output", "method", "sync", "usesmem")
MAX_BCOUNT = 1 << 20


@dataclass(frozen=True)
class Invocation:
    input: str
    output: str
    run: Run


def parse(argv: list[str]) -> Invocation:
    values: dict[str, str] = {}
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        if token.startswith("-") and not _is_number(token):
            name = token.lstrip("-")
            if name not in FLAGS:
                raise UsageError(f"unknown option {token!r}")
            if not tokens:
                raise UsageError(f"{token} needs a value")
            _set(values, name, tokens.pop(0))
        else:
            _set(values, "method", token)
    missing = [f"-{name}" for name in FLAGS if name not in values and name != "usesmem"]
    if missing:
        raise UsageError(f"missing {', '.join(missing)}")
    method = values["method"].lower()
    if method not in METHODS:
        raise UsageError(f"unknown method {values['method']!r} (choose from {', '.join(METHODS)})")
    sync = values["sync"].lower()
    if sync not in SYNCS:
        raise UsageError(f"-sync must be incore or outcore, not {values['sync']!r}")
    usesmem = values.get("usesmem", "no").lower()
    if usesmem not in ("yes", "no"):
        raise UsageError(f"-usesmem must be yes or no, not {values['usesmem']!r}")
    bsize = _integer(values, "bsize")
    bcount = _integer(values, "bcount")
    if not (32 <= bsize <= 1024 and bsize % 32 == 0):
        raise UsageError(f"-bsize must be a multiple of 32 from 32 to 1024, not {bsize}")
    if not 1 <= bcount <= MAX_BCOUNT:
        raise UsageError(f"-bcount must be from 1 to {MAX_BCOUNT}, not {bcount}")
    if usesmem == "yes" and method != "bmf":
        raise UsageError("-usesmem yes (segscan) applies to bmf only")
    if usesmem == "yes" and sync != "outcore":
        raise UsageError("-usesmem yes (segscan) is out-of-core only, as the spec defines it: use -sync outcore")
    return Invocation(values["input"], values["output"], Run(method, sync, usesmem == "yes", bsize, bcount))


def _is_number(token: str) -> bool:
    return token.lstrip("-").isdigit()


def _set(values: dict, name: str, value: str) -> None:
    if name in values:
        what = "a second method" if name == "method" else f"-{name} twice"
        raise UsageError(f"{what}: {values[name]!r} and {value!r}")
    values[name] = value


def _integer(values: dict, name: str) -> int:
    try:
        return int(values[name])
    except ValueError:
        raise UsageError(f"-{name} must be an integer, not {values[name]!r}") from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if any(token.lstrip("-") in ("h", "help") for token in argv) or not argv:
        stream = sys.stdout if argv else sys.stderr
        print(USAGE, file=stream)
        return 0 if argv else 2
    try:
        invocation = parse(argv)
    except UsageError as err:
        print(f"sssp: error: {err}\n\n{USAGE}", file=sys.stderr)
        return 2
    return _execute(invocation)


def _execute(invocation: Invocation) -> int:
    # Imported here so that --help and usage errors stay instant.
    from .device import select_device
    from .engine import solve
    from sssp_common.loader import load_graph
    from .output import report_lines, write_distance_file

    try:
        graph = load_graph(invocation.input)
        if graph.m and not ((graph.src == 0).any() or (graph.dst == 0).any()):
            print(f"sssp: warning: {invocation.input}: vertex 0 (the source) has no edges; "
                  "every other vertex is INF", file=sys.stderr)
        device = select_device()
        try:
            result = solve(graph, invocation.run, device)
        except ValueError as err:
            raise UsageError(str(err)) from None
        except Exception as err:  # CuPy/CUDA failures: one line, exit 3
            if device.is_gpu and type(err).__module__.startswith(("cupy", "cupy_backends")):
                raise DeviceError(f"{type(err).__name__}: {err}") from None
            raise
        for note in result.notes:
            if note.startswith("warning:"):
                print(f"sssp: {note}", file=sys.stderr)
        try:
            write_distance_file(invocation.output, result.dist)
        except OSError as err:
            raise InputError(invocation.output, f"cannot write: {err.strerror or err}") from None
        print("\n".join(report_lines(result, device, graph.m)), flush=True)
        return 0
    except InputError as err:
        print(f"sssp: error: {err}", file=sys.stderr)
        return 1
    except UsageError as err:
        print(f"sssp: error: {err}", file=sys.stderr)
        return 2
    except DeviceError as err:
        print(f"sssp: device error: {err}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("sssp: interrupted", file=sys.stderr)
        return 130
