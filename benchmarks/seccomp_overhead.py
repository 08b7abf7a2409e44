"""Issue 37's cost of the seccomp filter (grader/jail/seccomp.py) per jailed run.

    python3 -m benchmarks.seccomp_overhead             # 50 runs each way (needs root, bwrap, gcc)
    python3 -m benchmarks.seccomp_overhead --runs 200

Ways, alternating run by run through grader.jail.runner.run_program (what every graded run takes):
- `filter`: the jail as graded, bwrap given the filter with --seccomp;
- `empty`: the same jail with a filter that allows everything (seccomp.NOTHING): what any filter
  costs (the kernel's slower system-call entry), apart from what this profile's rules cost;
- `no filter`: the same jail with --seccomp taken off bwrap's command line.
Each way runs /bin/true (the fixed cost: the memfd, bwrap reading and loading the program) and
a C program making 2,000,000 system calls (getppid, and ioctl on /dev/null, which the CUDA
driver makes by the thousand): the per-call cost of a filter every call passes through.
Also printed: building the BPF program with libseccomp (once per grader process).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.jail import bwrap, seccomp  # noqa: E402
from grader.jail.runner import run_program  # noqa: E402
from grader.jail.sandbox import Sandbox  # noqa: E402

CALLS = 1_000_000
BUSY = r"""
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>
int main(void) {
    int fd = open("/dev/null", O_RDONLY), n = 0;
    for (long i = 0; i < %d; i++) { getppid(); ioctl(fd, FIONREAD, &n); }
    return 0;
}
"""
WAYS = ("filter", "empty", "no filter")
_way = ["filter"]


def _patch_for_ways() -> None:
    """Patch this process's jail so that `empty` runs get seccomp.NOTHING and `no filter` runs
    lose --seccomp (this benchmark only)."""
    original, profile = bwrap.Started.__init__, seccomp.program
    seccomp.program = lambda p=seccomp.PROFILE: profile(seccomp.NOTHING if _way[0] == "empty" else p)

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if _way[0] == "no filter":
            at = self.command.index("--seccomp")
            del self.command[at:at + 2]
    bwrap.Started.__init__ = init


def one_run(argv: list[str], way: str) -> tuple[float, float]:
    """(whole call, the run's own wall time), in seconds."""
    _way[0] = way
    began = time.perf_counter()
    with run_program(lambda out: argv, 120, sandbox=Sandbox(user="always")) as result:
        if result.exit_code != 0:
            raise SystemExit(f"{argv[0]} failed: {result.launch_error or result.stderr_tail}")
        status = result.protections
        inside = result.wall_s
    assert status["seccomp"]
    return time.perf_counter() - began, inside


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--busy-runs", type=int, default=10)
    args = parser.parse_args(argv)
    why = bwrap.unavailable()
    if why or shutil.which("gcc") is None:
        print(f"benchmarks.seccomp_overhead: {why or 'needs gcc'}", file=sys.stderr)
        return 2
    began = time.perf_counter()
    for _ in range(20):
        seccomp.build()
    print(f"building the BPF program ({len(seccomp.program()) // 8} instructions, libseccomp {seccomp.version()}): "
          f"{(time.perf_counter() - began) / 20 * 1000:.2f} ms, once per grader process")
    _patch_for_ways()
    folder = Path(tempfile.mkdtemp(prefix="seccomp-bench-"))
    try:
        folder.chmod(0o755)
        (folder / "busy.c").write_text(BUSY % CALLS)
        subprocess.run(["gcc", "-O2", "-o", str(folder / "busy"), str(folder / "busy.c")], check=True)
        for label, program, runs in (("/bin/true", ["/bin/true"], args.runs),
                                     (f"{2 * CALLS:,} calls", [str(folder / "busy")], args.busy_runs)):
            times: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
            for way in WAYS:
                one_run(program, way)                                   # warm-up
            for _ in range(runs):
                for way in WAYS:
                    times[way].append(one_run(program, way))
            print(f"{label}: {runs} runs each way")
            wall = {way: statistics.median(1000 * inside for _, inside in pairs) for way, pairs in times.items()}
            for way, pairs in times.items():
                print(f"  {way:<10} call median {statistics.median(1000 * whole for whole, _ in pairs):8.1f} ms"
                      f"   run wall median {wall[way]:8.1f} ms")
            for way in ("filter", "empty"):
                added = wall[way] - wall["no filter"]
                print(f"  {way} adds {added:.2f} ms per run (median run wall)" +
                      (f", {added * 1e6 / (2 * CALLS):.1f} ns per call" if program[0] != "/bin/true" else ""))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
