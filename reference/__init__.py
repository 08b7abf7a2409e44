"""Trusted SSSP answers from scipy's solvers, independent of the methods they judge (they share only the file reader)."""
from .solver import UNREACHABLE, ReferenceResult, compute, distances, distances_for_graph, reference_dir

__all__ = ["UNREACHABLE", "ReferenceResult", "compute", "distances", "distances_for_graph", "reference_dir"]
