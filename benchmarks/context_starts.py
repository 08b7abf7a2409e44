"""Issue 30's question: do a host's GPUs start CUDA processes in parallel, or one after another?

    python -m benchmarks.context_starts                 # every visible GPU; plain and jailed
    python -m benchmarks.context_starts --runs 64 --ways plain
    python -m benchmarks.context_starts --ways plain,mps --per-gpu 1,4,8

Grading starts one process per run (a student's program takes one input per process), and a
CUDA process's context costs ~0.31 s, mostly serial in the driver (DESIGN.md). Whether that
serial part is per GPU or per host decides what more GPUs can give a class's grading. A tiny
CUDA C program (context, one allocation, one kernel, exit) is started `--runs` times per
setting, spread over G GPUs with P processes at a time on each (each lane's worker process has
CUDA_VISIBLE_DEVICES set to its GPU, as grading's workers do). Ways: `plain` (a bare
subprocess) and `jail` (grader.jail.runner.run_program with the uid-switching sandbox, the path
every graded run takes; needs root and bwrap) and `mps` (bare subprocesses as clients of an MPS
control daemon started for the setting, with pipe and log folders of its own; one uid, so an
upper bound of what MPS could give a class, whose students each have their own uid and MPS
serves one uid at a time). If starts were per GPU, G GPUs would give G times the starts a
second of one at the same P.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.sweep.executors import visible_gpus  # noqa: E402

PROBE_SOURCE = r"""
#include <cstdio>
#include <cuda_runtime.h>
__global__ void touch(int *cell) { *cell += 1; }
int main() {
    int *cell = nullptr;
    if (cudaMalloc(&cell, sizeof(int)) != cudaSuccess) { std::puts("no device"); return 1; }
    touch<<<1, 1>>>(cell);
    if (cudaDeviceSynchronize() != cudaSuccess) { std::puts("kernel failed"); return 1; }
    cudaFree(cell);
    return 0;
}
"""


def build_probe(nvcc: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    source, binary = folder / "probe.cu", folder / "probe"
    source.write_text(PROBE_SOURCE)
    try:
        done = subprocess.run([nvcc, "-O2", "-arch=sm_90", "-o", str(binary), str(source)], capture_output=True, text=True)
    except OSError as error:
        raise SystemExit(f"benchmarks.context_starts: cannot run {nvcc}: {error.strerror} (--nvcc PATH)") from None
    if done.returncode:
        raise SystemExit(f"benchmarks.context_starts: {nvcc} failed on {source}: {done.stderr.strip()[-300:]}")
    os.chmod(folder, 0o755)
    os.chmod(binary, 0o755)
    return binary


def _use_gpu(gpu: str, extra_env: dict | None = None) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    os.environ.update(extra_env or {})


@contextmanager
def mps_daemon(folder: Path):
    """An MPS control daemon with pipe and log folders under ``folder``; yields the clients' env."""
    control = shutil.which("nvidia-cuda-mps-control") or "/usr/local/nvidia/bin/nvidia-cuda-mps-control"
    env = {"CUDA_MPS_PIPE_DIRECTORY": str(folder / "pipe"), "CUDA_MPS_LOG_DIRECTORY": str(folder / "log")}
    for path in env.values():
        Path(path).mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run([control, "-d"], env={**os.environ, **env}, check=True, capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        raise SystemExit(f"benchmarks.context_starts: cannot start the MPS daemon ({control}): {error}") from None
    try:
        yield env
    finally:
        subprocess.run([control], input="quit\n", env={**os.environ, **env}, text=True, capture_output=True, timeout=30)


def start_once(probe: str, way: str) -> float:
    """One process start, in a lane's worker; its wall seconds."""
    began = time.perf_counter()
    if way in ("plain", "mps"):  # mps: the worker's environment names the daemon's pipe folder
        done = subprocess.run([probe], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"probe failed: {done.stdout}{done.stderr}")
    else:
        from grader.jail.runner import run_program
        from grader.jail.sandbox import Sandbox
        with run_program(lambda out: [probe], 60, sandbox=Sandbox(user="always")) as result:
            if result.exit_code != 0:
                raise RuntimeError(f"jailed probe failed: {result.launch_error or result.stderr_tail}")
    return time.perf_counter() - began


def measure(probe: str, way: str, gpus: list[str], per_gpu: int, runs: int, extra_env: dict | None = None) -> dict:
    context = get_context("spawn")
    pools = [ProcessPoolExecutor(per_gpu, mp_context=context, initializer=_use_gpu, initargs=(gpu, extra_env))
             for gpu in gpus]
    try:
        for pool in pools:   # warm-up: every worker spawned and one start done before the clock
            for future in [pool.submit(start_once, probe, way) for _ in range(per_gpu)]:
                future.result()
        began = time.perf_counter()
        futures = [pools[index % len(pools)].submit(start_once, probe, way) for index in range(runs)]
        walls = [future.result() for future in futures]
        elapsed = time.perf_counter() - began
    finally:
        for pool in pools:
            pool.shutdown(wait=True)
    return {"way": way, "gpus": len(gpus), "per_gpu": per_gpu, "runs": runs, "wall_s": elapsed,
            "starts_per_s": runs / elapsed, "median_s": statistics.median(walls)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=48, help="process starts per setting")
    parser.add_argument("--per-gpu", default="1,4", help="processes at a time on each GPU")
    parser.add_argument("--ways", default="plain,jail")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    args = parser.parse_args(argv)
    gpus = visible_gpus()
    if not gpus:
        print("benchmarks.context_starts: no GPU visible", file=sys.stderr)
        return 2
    ways = [way for way in args.ways.split(",") if way]
    if "jail" in ways:
        from grader.jail import bwrap
        why = bwrap.unavailable()
        if why:
            print(f"benchmarks.context_starts: jail left out: {why}", file=sys.stderr)
            ways.remove("jail")
    probe = str(build_probe(args.nvcc, ROOT / "build" / "context-probe"))
    counts = sorted({1, 2, len(gpus)} & set(range(1, len(gpus) + 1)))
    rows = []
    for way in ways:
        for per_gpu in (int(p) for p in args.per_gpu.split(",")):
            base = None
            for count in counts:
                if way == "mps":
                    with mps_daemon(ROOT / "build" / "context-probe" / "mps") as env:
                        row = measure(probe, way, gpus[:count], per_gpu, args.runs, env)
                else:
                    row = measure(probe, way, gpus[:count], per_gpu, args.runs)
                base = base or row["starts_per_s"]
                row["speedup"] = row["starts_per_s"] / base
                rows.append(row)
                print(f"{way:<5} GPUs {count} x {per_gpu} at a time: {row['runs']} starts in {row['wall_s']:.2f} s "
                      f"({row['starts_per_s']:.2f}/s, median process {row['median_s'] * 1000:.0f} ms, "
                      f"{row['speedup']:.2f}x one GPU)", flush=True)
    print("\n| way | GPUs | at a time per GPU | starts | wall s | starts/s | median process ms | vs 1 GPU |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['way']} | {row['gpus']} | {row['per_gpu']} | {row['runs']} | {row['wall_s']:.2f} | "
              f"{row['starts_per_s']:.2f} | {row['median_s'] * 1000:.0f} | {row['speedup']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
