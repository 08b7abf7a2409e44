"""Issue 22's cost: what the bubblewrap jail adds to one run of a submission.

    python3 -m benchmarks.jail_overhead             # 50 runs of /bin/true each way (needs root and bwrap)
    python3 -m benchmarks.jail_overhead --runs 200

Each way runs /bin/true through grader.jail.runner.run_program, the one path every graded
run takes, and times the whole call (folders, tmpfs, cgroups, launch, wait, kill, clean-up)
and the run's own wall time (from the exec of the jail's helper to the program's exit):
- `jail`: Sandbox(user="always"), what `grade` uses: a bwrap jail with a leased uid;
- `unsafe`: Sandbox(user="always", jail=False), what `grade --unsafe` uses: the sandbox uid,
  cgroups, rlimits and a network namespace, no jail;
- `trusted`: Sandbox(user="never"): this checkout's own ./sssp in a sweep (no uid switch).
The ways alternate run by run, so a busy machine slows all three alike.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.jail import bwrap  # noqa: E402
from grader.jail.runner import run_program  # noqa: E402
from grader.jail.sandbox import Sandbox  # noqa: E402

WAYS = {"jail": Sandbox(user="always"), "unsafe": Sandbox(user="always", jail=False),
        "trusted": Sandbox(user="never")}


def one_run(settings: Sandbox) -> tuple[float, float]:
    """(whole call, the run's own wall time), in seconds."""
    began = time.perf_counter()
    with run_program(lambda out: ["/bin/true"], 30, sandbox=settings) as result:
        if result.exit_code != 0:
            raise SystemExit(f"/bin/true failed: {result.launch_error or result.stderr_tail}")
        inside = result.wall_s
    return time.perf_counter() - began, inside


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args(argv)
    why = bwrap.unavailable()
    if why:
        print(f"benchmarks.jail_overhead: {why}", file=sys.stderr)
        return 2
    for settings in WAYS.values():        # warm-up: probes, slot claims, first imports
        one_run(settings)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in WAYS}
    for _ in range(args.runs):
        for name, settings in WAYS.items():
            times[name].append(one_run(settings))
    print(f"{args.runs} runs of /bin/true each way through run_program ({bwrap.version(bwrap.find())})")
    print(f"{'way':<8} {'call median ms':>15} {'call p90 ms':>12} {'run wall median ms':>19}")
    for name, pairs in times.items():
        calls = sorted(1000 * whole for whole, _ in pairs)
        walls = [1000 * inside for _, inside in pairs]
        print(f"{name:<8} {statistics.median(calls):>15.1f} {calls[int(0.9 * len(calls)) - 1]:>12.1f} "
              f"{statistics.median(walls):>19.1f}")
    jail = statistics.median(1000 * whole for whole, _ in times["jail"])
    unsafe = statistics.median(1000 * whole for whole, _ in times["unsafe"])
    print(f"the jail's overhead per run (median call, jail - unsafe): {jail - unsafe:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
