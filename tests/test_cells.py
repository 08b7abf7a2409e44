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
