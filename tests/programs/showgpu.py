"""Stand-in sssp that names the GPUs it was let see (CUDA_VISIBLE_DEVICES) as its device.
Options (besides _fake's): --sleep S before running; --logdir DIR gets a file "gpus start end" per run,
so a test can check that runs on one GPU never overlap."""
import os
import sys
import time

import _fake


def value(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


seen = os.environ.get("CUDA_VISIBLE_DEVICES", "none")
_fake.TIMING = _fake.TIMING.replace("Fake Device", f"Fake GPU {seen}")
began = time.time()
time.sleep(float(value("--sleep", 0)))
_fake.main("ok")
if value("--logdir"):   # a file per run: a file named in the command would change the program's identity
    with open(os.path.join(value("--logdir"), f"{os.getpid()}-{began}"), "w") as log:
        log.write(f"{seen} {began} {time.time()}\n")
