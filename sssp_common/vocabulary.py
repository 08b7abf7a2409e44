"""The spec's vocabulary, defined once for the program, the reference, the report and the grader."""
from __future__ import annotations

# Method words ./sssp accepts. The spec's three first; then the seed papers' (issue: classics).
SPEC_METHODS = ("bmf", "tpe", "opt")
PAPER_METHODS = ("vbf", "vbf-stride", "vbf-flag", "harish", "dijkstra")
METHODS = SPEC_METHODS + PAPER_METHODS

# Names a run is recorded under: segscan is bmf run with -usesmem yes.
SEGSCAN = "segscan"
RECORDED_METHODS = ("bmf", SEGSCAN, "tpe", "opt") + PAPER_METHODS

SYNCS = ("outcore", "incore")
SYNC_NAMES = {"outcore": "out-of-core", "incore": "in-core"}
ORDERINGS = ("given", "source", "destination")

# The spec's five (block size, block count) execution configurations, in its order.
SPEC_CONFIGS = ((256, 8), (384, 5), (512, 4), (768, 2), (1024, 2))

# How one run ended, best first (the grader's verdict on the distances).
STATUSES = ("ok", "wrong", "timeout", "crash", "no_output", "malformed")
OK = "ok"

# Distances as the reference, the checker and the records hold them: int64, unreachable = -1.
UNREACHABLE = -1
SOURCE = 0


def recorded_method(method: str, usesmem: bool) -> str:
    """The name a run is recorded under: ``segscan`` for bmf with shared memory."""
    return SEGSCAN if (method == "bmf" and usesmem) else method


def program_method(recorded: str) -> tuple[str, bool]:
    """The inverse: (method word for ./sssp, usesmem) for a recorded name."""
    return ("bmf", True) if recorded == SEGSCAN else (recorded, False)


def config_label(bsize: int, bcount: int) -> str:
    """'256×8': block size × block count."""
    return f"{int(bsize)}×{int(bcount)}"
