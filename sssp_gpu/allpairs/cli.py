"""``./apsp``: all pairs shortest paths, in the same two command forms as ``./sssp``.

    apsp -input FILE -output D.npy METHOD
    apsp --input FILE --output D.npy --method METHOD
"""
from __future__ import annotations

import sys

from sssp_common.errors import DeviceError, InputError, UsageError, run_cli
from .memory import ensure_fits
from .methods import METHODS

USAGE = """\
usage: apsp -input FILE -output FILE METHOD
       apsp --input FILE --output FILE --method METHOD

  -input FILE    the graph, as for sssp (SNAP edge list or DIMACS .gr, optionally .gz)
  -output FILE   FILE.npy: the n x n distance matrix (row = source; int32 when every distance
                 fits, else int64; unreachable = the type's maximum; diagonal 0);
                 any other name: "u v d" lines for the reachable pairs
  METHOD         fw          Floyd-Warshall, one kernel per k
                 fw-blocked  three-phase blocked Floyd-Warshall, 128 x 128 tiles in shared memory
                 minplus     repeated min-plus squaring of the matrix, tiled (ceil(log2 n) at most)
                 sssp-all    shortest paths from every source, batches of sources on the GPU

Prints the kernel time (as sssp does) and a checksum: the sum of all finite distances and
the number of reachable pairs. Memory: n x n entries; refused, with the size needed, when
the GPU (or, without one, the host) cannot hold them.
Exit status: 0 ok, 1 bad input or too big, 2 bad command line, 3 device failure."""

FLAGS = ("input", "output", "method")


def parse(argv: list[str]) -> tuple[str, str, str]:
    values: dict[str, str] = {}
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        if token.startswith("-"):
            name = token.lstrip("-")
            if name not in FLAGS:
                raise UsageError(f"unknown option {token!r}")
            if not tokens:
                raise UsageError(f"{token} needs a value")
            value = tokens.pop(0)
        else:
            name, value = "method", token
        if name in values:
            raise UsageError(f"-{name} given twice: {values[name]!r} and {value!r}")
        values[name] = value
    missing = [f"-{name}" for name in FLAGS if name not in values]
    if missing:
        raise UsageError(f"missing {', '.join(missing)}")
    method = values["method"].lower()
    if method not in METHODS:
        raise UsageError(f"unknown method {values['method']!r} (choose from {', '.join(METHODS)})")
    return values["input"], values["output"], method


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or any(token.lstrip("-") in ("h", "help") for token in argv):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2

    def parse_and_execute() -> int:
        from sssp_common.files import temporaries_removed_on_signals

        parsed = parse(argv)
        with temporaries_removed_on_signals("apsp"):   # an n x n output is long to write
            return _execute(*parsed)

    return run_cli("apsp", parse_and_execute, usage=USAGE, subject=lambda: parse(argv)[0])


def _execute(source: str, output: str, method: str) -> int:
    from sssp_common.files import same_file
    from sssp_common.loader import load_graph
    from ..device import select_device
    from ..output import milliseconds
    from .methods import solve
    from .output import write_result

    if same_file(source, output):
        raise InputError(output, "is the input file: refusing to overwrite it (choose another -output)")
    graph = load_graph(source)
    device = select_device()
    ensure_fits(source, graph, method, device.is_gpu)
    try:
        result = solve(graph, method, device.is_gpu)
        total, count, top = result.stats()
        dtype = result.output_dtype(top)
        write_result(output, result, dtype)
    except OSError as err:
        raise InputError(output, f"cannot write: {err.strerror or err}") from None
    except Exception as err:
        if device.is_gpu and type(err).__module__.startswith(("cupy", "cupy_backends", "cuda")):
            raise DeviceError(f"{type(err).__name__}: {err}") from None
        raise
    print(f"The total computation kernel time on {device.timing_label} is {milliseconds(result.computation_ms)} "
          "milli-seconds")
    print(f"checksum: {total} (sum of the finite distances of {count} reachable pairs)")
    print(f"rounds: {result.rounds}")
    print(f"launch: {result.launch}")
    print(f"matrix: {graph.n} x {graph.n} {dtype.name}", flush=True)
    for note in result.notes:  # e.g. fw-blocked's int16 run and why it was kept or redone
        print(f"note: {note}", flush=True)
    return 0
