"""One entry point for every method on either device."""
from __future__ import annotations

import importlib

from .device import Device
from sssp_common.graph import Graph
from .methods.common import METHODS, Result, Run


def solve(graph: Graph, run: Run, device: Device) -> Result:
    if run.method not in METHODS:
        raise ValueError(f"unknown method {run.method!r} (choose from {', '.join(METHODS)})")
    if run.usesmem and run.method != "bmf":
        raise ValueError("--usesmem yes (segscan) applies to bmf only")
    method = importlib.import_module(f".methods.{run.method}", __package__)
    return method.run_gpu(graph, run) if device.is_gpu else method.run_cpu(graph, run)
