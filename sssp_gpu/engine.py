"""One entry point for every method on either device.

The :class:`Run` was checked when it was made; a method's own exceptions are bugs (or, on
the GPU, device failures), never a bad command line.
"""
from __future__ import annotations

import importlib

from .device import Device
from sssp_common.graph import Graph
from .methods.common import Result, Run


def method_module(method: str):
    """The module of a method word: variants (``vbf-stride``) live with their family (``vbf``)."""
    return importlib.import_module(f".methods.{method.split('-')[0]}", __package__)


def solve(graph: Graph, run: Run, device: Device) -> Result:
    method = method_module(run.method)
    return method.run_gpu(graph, run) if device.is_gpu else method.run_cpu(graph, run)
