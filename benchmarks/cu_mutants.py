"""Generated operator mutants of the CUDA C kernels, for ``make mutants`` beside the
hand-written list (benchmarks/mutant_list.py): bugs nobody on the team chose.

Every code line of sssp_gpu/kernels/*.cu and *.cuh (comments and preprocessor lines left
out) is scanned for the slips that hide best in kernels: a comparison's edge (``<`` <-> ``<=``,
``>`` <-> ``>=``), an accumulation that overwrites (``+=``, ``|=`` -> ``=``), a condition's
connective (``&&`` <-> ``||``) and a loop that starts one late (``= 0;`` -> ``= 1;`` in a for).
Each occurrence is one mutant; its ``old`` text is its line, widened by the lines before it
until it occurs once in the file, so benchmarks.mutants plants it exactly there. Its tests are
the selection the hand-written list gives that file. A run takes a fixed sample (every k-th
in name order from a seed offset), so the same kernels give the same sample anywhere.
"""
from __future__ import annotations

import re
from pathlib import Path

from benchmarks.mutant_list import MUTANTS, Mutant

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "sssp_gpu" / "kernels"

# (name, pattern, replacement): patterns match one operator, never part of a longer one
OPERATORS = (
    ("lt-le", re.compile(r"(?<![<>=!&|])<(?![<=])"), "<="),
    ("le-lt", re.compile(r"(?<![<>])<=(?!=)"), "<"),
    ("gt-ge", re.compile(r"(?<![<>=\-!&|])>(?![>=])"), ">="),
    ("ge-gt", re.compile(r"(?<![<>])>=(?!=)"), ">"),
    ("add-assign", re.compile(r"\+="), "="),
    ("or-assign", re.compile(r"\|="), "="),
    ("and-or", re.compile(r"&&"), "||"),
    ("or-and", re.compile(r"\|\|"), "&&"),
)
# Generated mutants that survive because no test can tell them apart, each with the reason a
# reviewer can check against the kernel line (the sample of 24, seed 0, sorted on the 2026-11-27
# H100 run; the other survivors of that run were real gaps: tests/test_gpu_wide.py).
EQUIVALENT = {
    "gen-bmf-19-lt-le-22": "k <= N loads one more in-bounds edge into u[N], past a fully unrolled register "
                           "array that nothing reads: a dead store, no observable effect",
    "gen-apsp-149-lt-le-30": "r <= SUB folds a[SUB] (past the unrolled register array) into acc[SUB], which "
                             "is never written back: a dead computation",
    "gen-opt-104-gt-ge-14": "the guard max_rounds = 8 n + 1024 is never approached by a correct solve (at most "
                            "n - 1 useful rounds); r >= max_rounds trips one round earlier, still unreachable",
    "gen-opt_phases-208-lt-le-28": "eb <= total adds one warp step whose lanes all have e >= total: "
                                   "relax_push(c, e < total, ...) relaxes nothing on it",
    "gen-opt_tiles-318-lt-le-39": "c <= best takes c when it equals best: the same value",
    "gen-tpe-101-lt-le-22": "candidate <= read[v] only adds atomicMin of an equal value (no change) and, "
                            "out of core, a changed flag for v whose relaxation then changes nothing",
}
LOOP_START = re.compile(r"(for\s*\([^;]*?=\s*)0(\s*;)")
TEMPLATE_ANGLE = re.compile(r"(template\s*<|static_cast<|reinterpret_cast<|const_cast<|<<<|>>>|#include)")


def _code(line: str) -> str:
    """The line without its // comment (string literals do not occur in the kernels)."""
    return line.split("//", 1)[0]


def _tests_by_file() -> dict[str, tuple[str, ...]]:
    chosen: dict[str, tuple[str, ...]] = {}
    for mutant in MUTANTS:
        chosen.setdefault(mutant.file, mutant.tests)
    return chosen


def _unique_old(lines: list[str], index: int, text: str) -> tuple[str, int] | None:
    """(the shortest run of lines ending at index that occurs once in text, its first line)."""
    for start in range(index, max(-1, index - 6), -1):
        old = "\n".join(lines[start:index + 1])
        if text.count(old) == 1:
            return old, start
    return None


def mutants_of(path: Path, tests: tuple[str, ...], root: Path = ROOT) -> list[Mutant]:
    text = path.read_text()
    lines = text.split("\n")
    rel = str(path.relative_to(root))
    found: list[Mutant] = []
    in_block = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if in_block:
            in_block = "*/" not in stripped
            continue
        if stripped.startswith("/*"):
            in_block = "*/" not in stripped
            continue
        if not stripped or stripped.startswith(("#", "//", "*")):
            continue
        code = _code(line)
        if TEMPLATE_ANGLE.search(code):
            continue
        edits = []
        for name, pattern, replacement in OPERATORS:
            for match in pattern.finditer(code):
                edits.append((name, match.start(), match.end(), replacement))
        for match in LOOP_START.finditer(code):
            edits.append(("loop-start", match.start(), match.end(), match.group(1) + "1" + match.group(2)))
        for name, begin, end, replacement in edits:
            new_line = line[:begin] + replacement + line[end:]
            unique = _unique_old(lines, index, text)
            if unique is None:
                continue
            old, first = unique
            new = "\n".join(lines[first:index] + [new_line])
            found.append(Mutant(f"gen-{path.stem}-{index + 1}-{name}-{begin}", rel, old, new,
                                f"{rel}:{index + 1}: {line[begin:end]} -> {replacement.strip()} (generated)", tests))
    return found


def generated(root: Path = ROOT) -> list[Mutant]:
    """Every generated mutant of the kernels that have a test selection."""
    tests = _tests_by_file()
    kernels = root / "sssp_gpu" / "kernels"
    out: list[Mutant] = []
    for path in sorted(list(kernels.glob("*.cu")) + list(kernels.glob("*.cuh"))):
        selection = tests.get(str(path.relative_to(root)))
        if selection:
            out.extend(mutants_of(path, selection, root))
    return out


def sample(mutants: list[Mutant], size: int, seed: int = 0) -> list[Mutant]:
    """Every k-th mutant in name order from offset seed % k."""
    ordered = sorted(mutants, key=lambda m: m.name)
    if size <= 0 or size >= len(ordered):
        return ordered
    step = len(ordered) / size
    offset = seed % max(1, int(step))
    return [ordered[int(offset + i * step) % len(ordered)] for i in range(size)]
