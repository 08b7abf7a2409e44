"""grader.sweep.cells and grader.sweep.identity: run ids are keyed by what the program is, never by its label."""
from __future__ import annotations

import sys

from grader.sweep.cells import Cell, expand
from grader.sweep.config import load_config
from grader.sweep.identity import template_identity, tree_digest
from sssp_common.record import project_commit


def cells_for(tmp_path, program_id: str) -> list[Cell]:
    path = tmp_path / "c.toml"
    path.write_text('graphs = ["figure1"]\nconfigs = [[256, 8]]\nmethods = ["bmf"]\n'
                    '[program]\nlabel = "same-label"\n')
    return expand(load_config(path), program_id=program_id)


def test_another_program_with_the_same_label_gets_other_run_ids(tmp_path):
    first, second = cells_for(tmp_path, "program@a"), cells_for(tmp_path, "program@b")
    assert [c.program for c in first] == [c.program for c in second]
    assert not {c.run_id for c in first} & {c.run_id for c in second}
    assert [c.run_id for c in first] == [c.run_id for c in cells_for(tmp_path, "program@a")]


def test_template_identity_follows_the_files_it_names(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text("print(1)\n")
    template = f"{{python}} {program} --input {{input}} --output {{output}}"
    first = template_identity(template)
    assert first.startswith("program@") and first == template_identity(template)
    program.write_text("print(2)\n")
    assert template_identity(template) != first                          # the program changed
    assert template_identity(template + " --extra") != template_identity(template)
    assert template_identity("{sssp} -input {input} -output {output}") == f"project@{project_commit()}"
    assert template_identity(f"{sys.executable} -c pass {{input}} {{output}}").startswith("program@")


def test_tree_digest_sees_content_modes_and_links(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.c").write_text("int main(){}\n")
    first = tree_digest(tmp_path)
    (tmp_path / "a" / "x.c").chmod(0o755)
    second = tree_digest(tmp_path)
    (tmp_path / "link").symlink_to("a/x.c")
    assert len({first, second, tree_digest(tmp_path)}) == 3


def test_a_graphs_cells_are_together_and_each_pass_keeps_its_orderings_together(tmp_path):
    """What a kept ./sssp relies on (grader.sweep.warm: one graph's inputs read once), without
    giving up repetitions as passes (the report's noise rule)."""
    path = tmp_path / "c.toml"
    path.write_text('graphs = ["a.txt", "b.txt"]\nreps = 2\nwarmup = 1\n')
    cells = expand(load_config(path))
    graphs = [c.graph for c in cells]
    assert graphs == sorted(graphs) and len(set(graphs)) == 2
    for graph in ("a", "b"):
        for rep in (0, 1):
            block = [c.ordering for c in cells if c.graph == graph and c.rep == rep]
            runs = [o for i, o in enumerate(block) if i == 0 or block[i - 1] != o]
            assert len(runs) == len(set(runs)) == 3                  # each ordering once, together
        reps = [c.rep for c in cells if c.graph == graph and c.rep >= 0]
        assert reps == sorted(reps)                                   # rep 0 of everything, then rep 1
