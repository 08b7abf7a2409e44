"""CUDA C kernels (``*.cu`` beside this file), compiled once by CuPy's NVRTC and cached.

CuPy keeps compiled modules in its on-disk kernel cache (``~/.cupy/kernel_cache``) keyed
by source and options, so ``make sssp`` calling :func:`warm_all` leaves the first real
run nothing to compile. The cache key is the text CuPy is given, so our own headers are
pasted into it (:func:`source`): an edited header is then a new key, never a stale binary.
"""
from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent
DIST_TYPES = ("int", "long long")

# module file -> kernel name expressions it must export (templates for both distance types)
MODULES = {
    "bmf": [f"{k}<{t}>" for k in ("bmf_outcore", "bmf_incore", "bmf_segscan") for t in DIST_TYPES],
    "tpe": ["tpe_count", "tpe_scan", "tpe_gather"]
    + [f"{k}<{t}>" for k in ("tpe_relax_outcore", "tpe_relax_incore") for t in DIST_TYPES],
    # opt's phase-per-launch driver (replayed from CUDA graphs) ...
    "opt": [f"{k}<{t}>" for k in ("opt_mark_k", "opt_expand_k", "opt_after_expand_k", "opt_split_k") for t in DIST_TYPES],
    # ... and its persistent kernel, launched cooperatively so all blocks are co-resident
    "opt_coop": [f"opt_persistent<{t}>" for t in DIST_TYPES],
    # ... and opt -tile N's persistent kernel (tile fixpoints in shared memory), cooperative too
    "opt_tiles": [f"opt_tiles_persistent<{t}>" for t in DIST_TYPES],
    # the seed papers' methods (vbf, vbf-stride, vbf-flag, harish, dijkstra) and all pairs
    "vbf": [f"{k}<{t}>" for k in ("vbf_relax", "vbf_flag_relax", "vbf_flag_forward") for t in DIST_TYPES],
    "harish": [f"{k}<{t}>" for k in ("harish_relax", "harish_commit") for t in DIST_TYPES],
    "dijkstra": [f"dijkstra_step<{t}>" for t in DIST_TYPES],
    "apsp": [f"{k}<{t}>" for k in ("apsp_fw_k", "apsp_fw_diagonal", "apsp_minplus_tiles", "apsp_batch_relax")
             for t in DIST_TYPES]
    # fw-blocked on int16 pairs (DPX): the diagonal closure in int16, the products two entries a word
    + ["apsp_fw_diagonal<short>", "apsp_minplus_s16x2"],
}
# module name -> (source file, launched with cuLaunchCooperativeKernel)
SOURCES = {"opt_coop": ("opt.cu", True), "opt_tiles": ("opt_tiles.cu", True)}


def c_type(dtype) -> str:
    """The kernel template argument for a numpy distance dtype."""
    return {2: "short", 4: "int"}.get(dtype.itemsize, "long long")


# the modules a method's run loads: (method word, sync) -> module names (None: either sync)
METHOD_MODULES = {("bmf", None): ("bmf",), ("tpe", None): ("tpe",), ("opt", "incore"): ("opt_coop",),
                  ("opt", "outcore"): ("opt",), ("vbf", None): ("vbf",), ("harish", None): ("harish",),
                  ("dijkstra", None): ("dijkstra",)}
_LOADING = threading.Lock()   # sssp.py loads a run's modules early, in its device thread


def module(name: str):
    with _LOADING:
        return _module(name)


def preload(method: str, sync: str) -> None:
    """Load the modules ``method`` will launch (from CuPy's disk cache), ahead of the run's
    setup; sssp.py's device thread calls it while the main thread still imports and loads."""
    family = method.split("-")[0]
    for name in METHOD_MODULES.get((family, sync), METHOD_MODULES.get((family, None), ())):
        kernel(name, MODULES[name][0])


@lru_cache(maxsize=None)
def _module(name: str):
    import cupy

    filename, cooperative = SOURCES.get(name, (f"{name}.cu", False))
    return cupy.RawModule(
        code=source(filename),
        options=("-std=c++17",),
        name_expressions=MODULES[name],
        enable_cooperative_groups=cooperative,
    )


_INCLUDE = re.compile(r'^#include "([\w.]+)"[ \t]*$', re.MULTILINE)
_PRAGMA_ONCE = re.compile(r"^#pragma once[ \t]*$", re.MULTILINE)


def source(filename: str, _seen: set | None = None) -> str:
    """The file's text with our ``#include "x.cuh"`` lines replaced by the headers (each once)."""
    seen = set() if _seen is None else _seen

    def paste(match: re.Match) -> str:
        name = match.group(1)
        if name in seen:
            return f"// {name}: already included"
        seen.add(name)
        return _PRAGMA_ONCE.sub("", source(name, seen))

    return _INCLUDE.sub(paste, (KERNEL_DIR / filename).read_text())


def kernel(module_name: str, name_expression: str):
    return module(module_name).get_function(name_expression)


def warm_all() -> list[str]:
    """Compile every module now (``make sssp`` on a GPU machine)."""
    compiled = []
    for name in list(MODULES):
        for expression in MODULES[name]:
            kernel(name, expression)
        compiled.append(name)
    return compiled
