"""The generated operator mutants of the kernels (benchmarks/cu_mutants.py): each plants one
operator change at one place, and a run's sample is the same everywhere."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks import cu_mutants
from benchmarks.mutants import planted

ROOT = Path(__file__).resolve().parents[1]


def test_every_generated_mutant_plants_one_change_at_one_place():
    mutants = cu_mutants.generated()
    assert len(mutants) > 100
    assert len({m.name for m in mutants}) == len(mutants)
    for m in mutants:
        text = (ROOT / m.file).read_text()
        assert text.count(m.old) == 1, m.name
        assert m.old != m.new and m.old.count("\n") == m.new.count("\n"), m.name
        changed = [(a, b) for a, b in zip(m.old.split("\n"), m.new.split("\n")) if a != b]
        assert len(changed) == 1 and not changed[0][0].lstrip().startswith(("//", "#")), m.name


def test_each_operator_class_is_generated_and_tested():
    kinds = Counter(m.name.rsplit("-", 1)[0].split("-", 3)[-1] for m in cu_mutants.generated())
    for kind in ("lt-le", "le-lt", "gt-ge", "add-assign", "or-assign", "and-or", "or-and", "loop-start"):
        assert kinds[kind] > 0, kind
    assert all(m.tests for m in cu_mutants.generated())


def test_a_sample_is_fixed_by_its_seed():
    mutants = cu_mutants.generated()
    first = cu_mutants.sample(mutants, 32, seed=0)
    assert [m.name for m in first] == [m.name for m in cu_mutants.sample(list(reversed(mutants)), 32, seed=0)]
    assert len({m.name for m in first}) == 32
    assert {m.name for m in first} != {m.name for m in cu_mutants.sample(mutants, 32, seed=1)}


def test_a_generated_mutant_is_planted_where_it_says(tmp_path):
    base = tmp_path / "base"
    (base / "sssp_gpu" / "kernels").mkdir(parents=True)
    source = "__global__ void k(int n, int *x) {\n  for (int i = 0; i < n; i++) x[i] += 1;\n}\n"
    (base / "sssp_gpu" / "kernels" / "k.cu").write_text(source)
    mutants = cu_mutants.mutants_of(base / "sssp_gpu" / "kernels" / "k.cu", ("t",), root=base)
    assert {m.name.split("-", 3)[-1].rsplit("-", 1)[0] for m in mutants} == {"lt-le", "add-assign", "loop-start"}
    tree = planted(base, tmp_path / "copy", next(m for m in mutants if "add-assign" in m.name))
    assert "x[i] = 1;" in (tree / "sssp_gpu" / "kernels" / "k.cu").read_text()
    assert (base / "sssp_gpu" / "kernels" / "k.cu").read_text() == source


def test_every_argued_equivalent_mutant_is_one_that_is_generated_and_names_what_it_changes():
    """A kernel edit that moves a line renames its mutants: a stale entry would excuse nothing and
    a renamed survivor would count again, so the list must be sorted again then."""
    names = {m.name: m for m in cu_mutants.generated()}
    for name, reason in cu_mutants.EQUIVALENT.items():
        assert name in names, name
        assert len(reason) > 30, name


def test_only_survivors_argued_equivalent_leave_the_score():
    from benchmarks.mutants import Outcome, score, table
    mutants = {m.name: m for m in cu_mutants.generated()}
    equivalent = mutants[next(iter(cu_mutants.EQUIVALENT))]
    other = next(m for name, m in mutants.items() if name not in cu_mutants.EQUIVALENT)
    outcomes = [Outcome(equivalent, "survived"), Outcome(other, "survived"), Outcome(other, "caught")]
    assert score(outcomes) == (1, 2)
    assert score([Outcome(equivalent, "caught")]) == (1, 1)       # caught counts whatever the list says
    assert "1 argued equivalent" in table(outcomes)
