"""Trusted SSSP answers from scipy's solvers, independent of the methods they judge (they share only the file reader).

Exact at any size (integers where a path could reach 2**53); :func:`verify` checks a held answer against its checksum."""
from sssp_common.digest import distances_checksum as checksum  # reference.checksum: what verify() checks
from .solver import (UNREACHABLE, ReferenceResult, compute, distances, distances_for_graph, integer_mode,
                     reference_dir, solve, verify)

__all__ = ["UNREACHABLE", "ReferenceResult", "checksum", "compute", "distances", "distances_for_graph",
           "integer_mode", "reference_dir", "solve", "verify"]
