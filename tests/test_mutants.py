"""The mutation harness (benchmarks/mutants.py): its list stays planted-able, covers every
kernel file and the GPU timer, and its verdicts are right (checked on CPU mutants)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from benchmarks.mutant_list import CPU_MUTANTS, MUTANTS
from benchmarks.mutants import run_mutants, score, table

ROOT = Path(__file__).resolve().parents[1]


def test_every_mutant_text_is_in_its_file_exactly_once():
    stale = [m.name for m in MUTANTS + CPU_MUTANTS if (ROOT / m.file).read_text().count(m.old) != 1]
    assert stale == [], "these mutants no longer apply: update benchmarks/mutant_list.py"
    assert len({m.name for m in MUTANTS + CPU_MUTANTS}) == len(MUTANTS + CPU_MUTANTS)
    assert all(m.old != m.new for m in MUTANTS + CPU_MUTANTS)


def test_mutants_cover_every_kernel_file_and_the_gpu_host_code():
    kernel_files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "sssp_gpu" / "kernels").glob("*.cu*")}
    planted = {m.file for m in MUTANTS}
    assert kernel_files <= planted, f"no mutant in {sorted(kernel_files - planted)}"
    assert {"sssp_gpu/timing.py", "sssp_gpu/output.py"} <= planted
    assert any(f.startswith("sssp_gpu/methods/") for f in planted)
    assert len(MUTANTS) >= 20


def test_caught_and_survived_are_told_apart_on_the_cpu():
    """A timer in seconds is caught by the timer test; an equivalent change survives it."""
    quick = ("tests/test_gpu_semantics.py", "-k", "cpu_timer")
    by_name = {m.name: m for m in CPU_MUTANTS}
    chosen = [replace(by_name["cpu-timer-seconds"], tests=quick),
              replace(by_name["cpu-equivalent-stable-sort"], tests=quick)]
    stale = replace(chosen[0], name="stale", old="no such text anywhere")
    outcomes = run_mutants(chosen + [stale], cpu=True, jobs=2, budget_s=240)
    assert [o.verdict for o in outcomes] == ["caught", "survived", "stale"]
    assert score(outcomes) == (1, 2)
    assert "score: 1 / 2 caught (50 %); 1 stale (not judged)" in table(outcomes)
    assert (ROOT / by_name["cpu-timer-seconds"].file).read_text().count(by_name["cpu-timer-seconds"].old) == 1


def test_without_git_the_copy_lists_the_same_files(monkeypatch):
    """The GPU machine's copy of the tree may have no .git: the walk keeps what git keeps."""
    from benchmarks import mutants

    with_git = mutants.tree_files(ROOT)

    def no_git(*args, **kwargs):
        raise OSError("git: not here")

    monkeypatch.setattr(mutants.subprocess, "run", no_git)
    assert mutants.tree_files(ROOT) == with_git


def test_a_selection_the_unmutated_tree_fails_judges_none_of_its_mutants():
    by_name = {m.name: m for m in CPU_MUTANTS}
    failing = ("tests/test_gpu_semantics.py", "-k", "cpu_timer", "--no-such-option")
    outcomes = run_mutants([replace(by_name["cpu-timer-seconds"], tests=failing)], cpu=True, jobs=1, budget_s=60)
    assert [o.verdict for o in outcomes] == ["baseline fails"] and score(outcomes) == (0, 0)
