"""The wall line's start-up counts from the process's start, as README says: a launcher
that waits before exec'ing the interpreter (as ./sssp's shell script execs it) is counted."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_start_up_counts_what_the_process_did_before_the_interpreter(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("0 1 2\n1 2 3\n")
    command = (f"sleep 0.6; exec {sys.executable} {ROOT / 'sssp.py'} -input {graph} -bsize 256 -bcount 8 "
               f"-output {tmp_path / 'out.txt'} bmf -sync outcore")
    env = dict(os.environ, SSSP_DEVICE="cpu", SSSP_CACHE_DIR=str(tmp_path / "cache"))
    began = time.monotonic()
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, env=env, timeout=120)
    elapsed = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    wall = re.search(r"wall: total ([0-9.]+) s \(start-up ([0-9.]+), load ([0-9.]+), device ([0-9.]+), "
                     r"setup ([0-9.]+), kernels ([0-9.]+), output ([0-9.]+)\)", done.stdout)
    total, start_up, *rest = (float(x) for x in wall.groups())
    assert 0.6 <= start_up <= total <= elapsed + 0.02
    assert abs(start_up + sum(rest) - total) < 0.01
