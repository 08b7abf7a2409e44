#!/usr/bin/env python3
"""CS 515 Project 2: single-source shortest paths on the GPU. See ``./sssp --help``."""
import time

STARTED = time.perf_counter()  # before any other import: the wall line's start-up counts them

import sys  # noqa: E402

from sssp_gpu.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(started=STARTED))
