"""A program's identity (grader/sweep/identity.py) changes with everything that can change what
it does, and with nothing else: run ids are keyed by it, so a resubmission that changes one byte
or one link target must run again, and a copy of the same tree must not."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from grader.sweep import identity


def tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "Makefile").write_text("sssp:\n\tcc -o sssp src/main.c\n")
    (root / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    (root / "run.sh").write_text("#!/bin/sh\n./sssp \"$@\"\n")
    os.chmod(root / "run.sh", 0o755)
    os.chmod(root / "Makefile", 0o644)
    os.chmod(root / "src" / "main.c", 0o644)
    (root / "empty").mkdir()
    os.symlink("src/main.c", root / "main-link.c")
    os.mkfifo(root / "pipe")
    return root


# The digest of tree() above. Run ids of every graded cell hang on this format: a change to it
# re-runs every submission of every class being graded, so it changes only on purpose.
GOLDEN_TREE = "84cdb56bb2fdba0b5a4e6d44a3d8adcece883eefaa4728d6f4494228bdd2360d"


def test_the_tree_digest_format_is_pinned(tmp_path):
    assert identity.tree_digest(tree(tmp_path / "a")) == GOLDEN_TREE


def test_a_copy_elsewhere_with_other_times_and_read_bits_is_the_same_program(tmp_path):
    first = identity.tree_digest(tree(tmp_path / "a"))
    second_root = tree(tmp_path / "b")
    os.utime(second_root / "src" / "main.c", (1, 1))
    os.chmod(second_root / "Makefile", 0o600)          # read/write bits do not change what runs
    assert identity.tree_digest(second_root) == first


def test_every_change_that_can_change_the_program_changes_the_digest(tmp_path):
    base = identity.tree_digest(tree(tmp_path / "base"))

    def changed(name, edit) -> str:
        root = tree(tmp_path / name)
        edit(root)
        return identity.tree_digest(root)

    variants = {
        "a byte": changed("byte", lambda r: (r / "src" / "main.c").write_text("int main(void) { return 1; }\n")),
        "an exec bit": changed("exec", lambda r: os.chmod(r / "src" / "main.c", 0o755)),
        "an exec bit dropped": changed("noexec", lambda r: os.chmod(r / "run.sh", 0o644)),
        "a link target": changed("link", lambda r: (os.unlink(r / "main-link.c"),
                                                    os.symlink("Makefile", r / "main-link.c"))),
        "a renamed file": changed("rename", lambda r: os.rename(r / "run.sh", r / "go.sh")),
        "an empty folder": changed("dir", lambda r: (r / "more").mkdir()),
        "a folder gone": changed("nodir", lambda r: (r / "empty").rmdir()),
        "a fifo gone": changed("nofifo", lambda r: os.unlink(r / "pipe")),
        "a link made a file": changed("linkfile", lambda r: (os.unlink(r / "main-link.c"),
                                      (r / "main-link.c").write_text("src/main.c"))),
        "a folder made a file": changed("dirfile", lambda r: ((r / "empty").rmdir(), (r / "empty").write_text(""))),
        "a fifo made a folder": changed("fifodir", lambda r: (os.unlink(r / "pipe"), (r / "pipe").mkdir())),
    }
    assert all(digest != base for digest in variants.values()), [k for k, d in variants.items() if d == base]
    assert len(set(variants.values())) == len(variants)


def test_a_template_is_identified_by_its_text_and_the_files_it_names(tmp_path):
    program = tmp_path / "prog.sh"
    program.write_text("#!/bin/sh\necho 1\n")
    template = f"{program} -input {{input}}"
    first = identity.template_identity(template)
    assert first.startswith("program@") and len(first) == len("program@") + 24
    assert identity.template_identity(template) == first
    program.write_text("#!/bin/sh\necho 2\n")
    assert identity.template_identity(template) != first
    assert identity.template_identity(template + " -x") != identity.template_identity(template)


def test_relative_files_are_found_beside_the_config(tmp_path):
    for name, text in (("a", "one"), ("b", "two")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "prog").write_text(text)
    same_text = "./prog {input}"
    in_a = identity.template_identity(same_text, config_dir=tmp_path / "a")
    in_b = identity.template_identity(same_text, config_dir=tmp_path / "b")
    assert in_a != in_b
    assert identity.template_identity(same_text, config_dir=tmp_path / "a") == in_a


def test_only_the_first_word_is_looked_up_on_path(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "mytool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    first_word = identity.template_identity("mytool {input}")
    tool.write_text("#!/bin/sh\n# changed\n")
    assert identity.template_identity("mytool {input}") != first_word     # the tool is part of it
    later_word = identity.template_identity("/bin/echo mytool")
    tool.write_text("#!/bin/sh\n# changed again\n")
    assert identity.template_identity("/bin/echo mytool") == later_word  # an argument is just text


def test_python_and_sssp_placeholders_name_real_files(tmp_path):
    assert identity._named_file("{python}", True, None, None) == Path(sys.executable)
    sssp = tmp_path / "sssp"
    sssp.write_text("v1")
    with_sssp = identity.template_identity("{sssp} -input {input}", sssp=sssp)
    sssp.write_text("v2")
    assert identity.template_identity("{sssp} -input {input}", sssp=sssp) != with_sssp
    assert identity.template_identity("{sssp} -input {input}").startswith("project@")
    assert identity._named_file("{input}", False, tmp_path, None) is None
    assert identity._named_file("missing/file", False, tmp_path, None) is None


def test_an_unbalanced_quote_is_still_identified(tmp_path):
    program = tmp_path / "p"
    program.write_text("x")
    template = f"{program} 'unbalanced"
    first = identity.template_identity(template)
    program.write_text("y")
    assert identity.template_identity(template) != first


def test_config_dir_placeholder_and_leftover_placeholders(tmp_path, monkeypatch):
    (tmp_path / "prog").write_text("one")
    named = identity._named_file("{config_dir}/prog", True, tmp_path, None)
    assert named == tmp_path / "prog"
    monkeypatch.chdir(tmp_path)
    assert identity._named_file("{config_dir}/prog", True, None, None) == tmp_path / "prog"
    # a placeholder left in a word is never taken for a file, even where one has that name
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "{output}").write_text("not the program")
    assert identity._named_file("out/{output}", False, tmp_path, None) is None
