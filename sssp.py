#!/usr/bin/env python3
"""CS 515 Project 2: single-source shortest paths on the GPU. See ``./sssp --help``."""
import sys

from sssp_gpu.cli import main

if __name__ == "__main__":
    sys.exit(main())
