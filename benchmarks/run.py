"""``make bench``: every benchmark, one after another; each prints its table as it ends
and appends its numbers to build/bench/results.jsonl, so a failure loses nothing."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ["load.py", "methods.py", "bench_opt.py"]


def main(argv: list[str]) -> int:
    failed = []
    for script in SCRIPTS:
        if not (HERE / script).exists():
            continue
        print(f"\n=== {script} ===", flush=True)
        if subprocess.run([sys.executable, str(HERE / script), *argv]).returncode != 0:
            failed.append(script)
    if failed:
        print(f"benchmarks that failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
