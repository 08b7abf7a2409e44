"""CUDA C kernels (``*.cu`` beside this file), compiled once by CuPy's NVRTC and cached.

CuPy keeps compiled modules in its on-disk kernel cache (``~/.cupy/kernel_cache``) keyed
by source and options, so ``make sssp`` calling :func:`warm_all` leaves the first real
run nothing to compile.
"""
from __future__ import annotations

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
    "opt": [f"{k}<{t}>" for k in ("opt_expand_k", "opt_after_expand_k", "opt_split_k") for t in DIST_TYPES],
    # ... and its persistent kernel, launched cooperatively so all blocks are co-resident
    "opt_coop": [f"opt_persistent<{t}>" for t in DIST_TYPES],
}
# module name -> (source file, launched with cuLaunchCooperativeKernel)
SOURCES = {"opt_coop": ("opt.cu", True)}


def c_type(dtype) -> str:
    """The kernel template argument for a numpy distance dtype."""
    return "int" if dtype.itemsize == 4 else "long long"


@lru_cache(maxsize=None)
def module(name: str):
    import cupy

    filename, cooperative = SOURCES.get(name, (f"{name}.cu", False))
    source = (KERNEL_DIR / filename).read_text()
    return cupy.RawModule(
        code=source,
        options=("-std=c++17", f"-I{KERNEL_DIR}", *_extra_defines()),
        name_expressions=MODULES[name],
        enable_cooperative_groups=cooperative,
    )


def _extra_defines() -> list[str]:
    """``SSSP_KERNEL_DEFINES="A=1 B=0"``: compile-time switches benchmarks compare."""
    import os

    return [f"-D{item}" for item in os.environ.get("SSSP_KERNEL_DEFINES", "").split()]


def kernel(module_name: str, name_expression: str):
    return module(module_name).get_function(name_expression)


def register(name: str, name_expressions: list[str]) -> None:
    """Let a method module declare its own ``.cu`` file's exported kernels."""
    MODULES[name] = list(name_expressions)


def warm_all() -> list[str]:
    """Compile every module now (``make sssp`` on a GPU machine)."""
    compiled = []
    for name in list(MODULES):
        for expression in MODULES[name]:
            kernel(name, expression)
        compiled.append(name)
    return compiled
