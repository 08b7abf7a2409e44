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


OPTIONS = ("-std=c++17",)


class Module:
    """A compiled module whose kernels are looked up by name expression (``opt_persistent<int>``).

    Why not only ``RawModule(name_expressions=...)``: CuPy then compiles with NVRTC in every
    process, whatever its disk cache holds, because it needs NVRTC to tell it the mangled
    names (on the H100: 0.4-1.2 s a module, in every ``./sssp`` run). The names depend on the
    source alone, so the first compile's are kept beside CuPy's cache (:func:`names_file`); a
    later process builds the module without name expressions, which CuPy loads from its disk
    cache (~0.08 s), and asks for the kept names. If that cubin was built without the template
    instantiations (CuPy's cache cleared, then filled by such a load), a name is missing and
    the module is compiled with its expressions again.
    """

    def __init__(self, raw, names: dict | None):
        self.raw, self.names = raw, names

    def get_function(self, expression: str):
        if self.names is None:
            return self.raw.get_function(expression)
        return self.raw.get_function(self.names[expression])


def names_file(code: str, cooperative: bool):
    import hashlib
    import json

    import cupy

    from sssp_common.files import cache_dir

    key = json.dumps([code, OPTIONS, cooperative, cupy.__version__, cupy.cuda.runtime.runtimeGetVersion(),
                      cupy.cuda.Device().compute_capability])
    return cache_dir("kernels") / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _read_names(path, expressions) -> dict | None:
    import json

    try:
        names = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(names, dict) or any(not isinstance(names.get(e), str) for e in expressions):
        return None
    return names


@lru_cache(maxsize=None)
def _module(name: str) -> Module:
    import json

    import cupy

    filename, cooperative = SOURCES.get(name, (f"{name}.cu", False))
    code, expressions = source(filename), MODULES[name]
    path = names_file(code, cooperative)
    names = _read_names(path, expressions)
    if names is not None:
        module = Module(cupy.RawModule(code=code, options=OPTIONS, enable_cooperative_groups=cooperative), names)
        try:
            for expression in expressions:
                module.get_function(expression)
            return module
        except cupy.cuda.driver.CUDADriverError:  # a cubin without the instantiations: compile below
            pass
    raw = cupy.RawModule(code=code, options=OPTIONS, name_expressions=expressions,
                         enable_cooperative_groups=cooperative)
    raw.get_function(expressions[0])  # compiles
    mapping = getattr(getattr(raw, "module", None), "mapping", None)
    if isinstance(mapping, dict) and all(isinstance(mapping.get(e), str) for e in expressions):
        from sssp_common.files import write_text_atomically
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomically(path, json.dumps({e: mapping[e] for e in expressions}))
        except OSError:  # a read-only cache: every process compiles, as before
            pass
    return Module(raw, None)


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
