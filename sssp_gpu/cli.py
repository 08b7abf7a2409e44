"""The command line, in both forms the course uses.

Spec form (positional method):  sssp -input F -bsize 512 -bcount 4 -output out.txt bmf -sync incore
Course sample form:             sssp --input F --bsize 512 --bcount 4 --output out.txt --method bmf
                                     --sync incore --usesmem yes
Flags take one or two dashes and come in any order.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sssp_common.errors import DeviceError, InputError, UsageError, run_cli
from .timing import Stages, process_start

if TYPE_CHECKING:
    from .methods.common import Run

USAGE = """\
usage: sssp -input FILE -bsize N -bcount N -output FILE METHOD -sync incore|outcore [-usesmem yes|no]
            [-delta N] [-fuse N] [-tile N] [-paths FILE]
       sssp --input FILE --bsize N --bcount N --output FILE --method METHOD --sync incore|outcore [--usesmem yes|no]

  -input FILE      edge list: lines "src dst [weight]" (weight 1 if absent), '#' comments;
                   or a DIMACS .gr file; either may be gzipped (.gz); a pipe or FIFO is read once.
                   Source vertex: 0.
  -bsize N         threads per block: 32..1024, a multiple of 32
  -bcount N        blocks: 1..1048576 (the spec's configurations: 256x8 384x5 512x4 768x2 1024x2)
  -output FILE     where to write "<vertex>:<distance>" lines (INF if unreachable); never the input
  METHOD           bmf (Bellman-Ford), tpe (to-process-edge filtering), opt (our optimisation);
                   the seed papers': vbf (vertex-centric Bellman-Ford, a thread per vertex),
                   vbf-stride (grid-stride loop), vbf-flag (only vertices changed last round),
                   harish (Harish-Narayanan two kernels, with predecessors), dijkstra (parallel
                   Dijkstra, one vertex per step; up to 200,000 vertices)
  -sync MODE       outcore (distance_prev/distance_cur, swapped per round) or incore (one array)
  -usesmem yes|no  bmf only: the shared-memory segmented-scan kernel (segscan); out-of-core,
                   for edge lists sorted by destination (other orders work, more slowly)
  -delta N         opt only: near-far bucket width (default: automatic; 0: unbounded, BFS-like rounds)
  -fuse N          opt only: block-local steps per thin round, bucket fusion (default 32; 0: off)
  -tile N          opt only: tile fixpoints in shared memory, tiles of N vertices (32..3072;
                   0: off; default on the GPU: 1024 for grids, else off); with it,
                   -fuse N caps a tile's steps per round (default 16; 32 when opt chose them)
  -paths FILE      also write each vertex's predecessor on a shortest path, "<vertex>:<pred>"
                   ("-" for the source and unreachable); python -m sssp_gpu.paths prints a path

Without a CUDA GPU (or with SSSP_DEVICE=cpu) the same method runs in numpy on the CPU.
Exit status: 0 ok, 1 bad input file, 2 bad command line, 3 device failure."""

FLAGS = ("input", "bsize", "bcount", "output", "method", "sync", "usesmem", "delta", "fuse", "tile", "paths")
OPTIONAL = ("usesmem", "delta", "fuse", "tile", "paths")


@dataclass(frozen=True)
class Invocation:
    input: str
    output: str
    run: Run
    paths: str | None = None


def parse(argv: list[str]) -> Invocation:
    """The command line as a checked :class:`Invocation`; anything wrong is a UsageError."""
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
    missing = [f"-{name}" for name in FLAGS if name not in values and name not in OPTIONAL]
    if missing:
        raise UsageError(f"missing {', '.join(missing)}")
    usesmem = values.get("usesmem", "no").lower()
    if usesmem not in ("yes", "no"):
        raise UsageError(f"-usesmem must be yes or no, not {values['usesmem']!r}")
    from .methods.common import Run  # numpy: not on the --help path

    run = Run(values["method"].lower(), values["sync"].lower(), usesmem == "yes",
              _integer(values, "bsize"), _integer(values, "bcount"),
              delta=_integer(values, "delta"), fuse=_integer(values, "fuse"), tile=_integer(values, "tile"))
    paths = values.get("paths")
    if paths is not None and os.path.realpath(paths) == os.path.realpath(values["output"]):
        raise UsageError("-paths and -output name the same file: one would overwrite the other")
    return Invocation(values["input"], values["output"], run, paths)


def _is_number(token: str) -> bool:
    return token.lstrip("-").isdigit()


def _set(values: dict, name: str, value: str) -> None:
    if name in values:
        what = "a second method" if name == "method" else f"-{name} twice"
        raise UsageError(f"{what}: {values[name]!r} and {value!r}")
    values[name] = value


def _integer(values: dict, name: str) -> int | None:
    if name not in values:
        return None
    try:
        return int(values[name])
    except ValueError:
        raise UsageError(f"-{name} must be an integer, not {values[name]!r}") from None


def main(argv: list[str] | None = None, started: float | None = None, *, fresh: bool = True,
         load=None) -> int:
    """``started``: ``time.perf_counter()`` at the top of sssp.py (the wall line's fallback start).
    A kept process (sssp_gpu.serve) passes ``fresh=False``, so the wall line starts at
    ``started`` rather than at the process's start, and its own ``load`` (path -> Graph, a
    shelf of graphs already read; default sssp_common.loader.load_graph)."""
    started = time.perf_counter() if started is None else started
    if fresh:
        started = process_start(started)
    argv = sys.argv[1:] if argv is None else argv
    if any(token.lstrip("-") in ("h", "help") for token in argv) or not argv:
        stream = sys.stdout if argv else sys.stderr
        print(USAGE, file=stream)
        return 0 if argv else 2
    parsed: list[Invocation] = []

    def parse_and_execute() -> int:
        from sssp_common.files import temporaries_removed_on_signals

        parsed.append(parse(argv))
        with temporaries_removed_on_signals("sssp"):
            return _execute(parsed[0], Stages(started), load)

    return run_cli("sssp", parse_and_execute, usage=USAGE, subject=lambda: parsed[0].input if parsed else None)


def _execute(invocation: Invocation, stages: Stages, load=None) -> int:
    # Imported here so that --help and usage errors stay instant; cupy only once a GPU is chosen.
    from sssp_common.files import same_file
    from sssp_common.loader import load_graph
    from concurrent.futures import ThreadPoolExecutor

    from .device import ready_device
    from .engine import solve
    from .memory import ensure_fits
    from .output import report_lines, write_distance_file

    # Only a regular file is destroyed by writing over it (a terminal may be both ends).
    if same_file(invocation.input, invocation.output) and os.path.isfile(invocation.input):
        raise InputError(invocation.output, "is the input file: refusing to overwrite it (choose another -output)")
    stages.lap("start-up")
    # The device (CuPy's import, the CUDA context) gets ready while the graph loads; the
    # "device" stage is whatever of it the load did not hide.
    with ThreadPoolExecutor(max_workers=1) as pool:
        device_ready = pool.submit(ready_device)
        graph = (load or load_graph)(invocation.input)
        if graph.m and not ((graph.src == 0).any() or (graph.dst == 0).any()):
            print(f"sssp: warning: {invocation.input}: vertex 0 (the source) has no edges; "
                  "every other vertex is INF", file=sys.stderr)
        stages.lap("load")
        device = device_ready.result()
    ensure_fits(invocation.input, graph, invocation.run, device)
    stages.lap("device")
    try:
        result = solve(graph, invocation.run, device)
    except Exception as err:
        # CuPy/CUDA failures: one line, exit 3. A method's ValueError says this graph cannot
        # be solved (e.g. its distances cannot fit): an input error. Anything else is a bug.
        if device.is_gpu and type(err).__module__.startswith(("cupy", "cupy_backends", "cuda")):
            raise DeviceError(f"{type(err).__name__}: {err}") from None
        if isinstance(err, ValueError):
            raise InputError(invocation.input, str(err)) from None
        raise
    stages.lap("setup")
    stages.move("setup", "kernels", (result.computation_ms + result.filtering_ms) / 1e3)
    for note in result.notes:
        if note.startswith("warning:"):
            print(f"sssp: {note}", file=sys.stderr)
    try:
        write_distance_file(invocation.output, result.dist)
    except OSError as err:
        raise InputError(invocation.output, f"cannot write: {err.strerror or err}") from None
    if invocation.paths is not None:
        _write_paths(invocation, graph, result, device)
    stages.lap("output")
    lines = report_lines(result, device, graph.m)
    lines.append(stages.line())
    print("\n".join(lines), flush=True)
    return 0


def _write_paths(invocation: Invocation, graph, result, device) -> None:
    from sssp_common.files import same_file
    from .paths import predecessors, write_paths_file

    if same_file(invocation.input, invocation.paths):
        raise InputError(invocation.paths, "is the input file: refusing to overwrite it (choose another -paths)")
    try:
        write_paths_file(invocation.paths, predecessors(graph, result, on_gpu=device.is_gpu))
    except OSError as err:
        raise InputError(invocation.paths, f"cannot write: {err.strerror or err}") from None
