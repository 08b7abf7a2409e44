#!/usr/bin/env python3
"""All pairs shortest paths on the GPU (Floyd-Warshall, blocked FW, min-plus, SSSP from every source). See ``./apsp --help``."""
import sys

from sssp_gpu.allpairs.cli import main

if __name__ == "__main__":
    sys.exit(main())
