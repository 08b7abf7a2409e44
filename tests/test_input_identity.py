"""An exposed input is judged unchanged by what it holds, not by a change time that other
sessions move (issue 27: a grade failed under load with "changed since it was written")."""
from __future__ import annotations

import os

from grader.data import inputs


def exposed(tmp_path):
    source = tmp_path / "g.txt"
    source.write_text("0 1 4\n0 2 2\n1 2 5\n")
    made = inputs.spec_input(source, "given", tmp_path / "cache")
    return made, inputs.expose(made, tmp_path / "shown")


def test_another_sessions_cleanup_does_not_change_an_inputs_identity(tmp_path):
    """The shared file is a hard link into a session's private cache: deleting that cache
    (what the next test session does to an old one) moves the shared inode's ctime."""
    made, shown = exposed(tmp_path)
    before = inputs.identity(shown)
    ctime = shown.stat().st_ctime_ns
    os.link(shown, tmp_path / "another-link")
    made.unlink()
    assert shown.stat().st_ctime_ns != ctime      # the premise: the inode's ctime moved
    assert inputs.identity(shown) == before


def test_a_rewrite_with_its_times_set_back_is_still_seen(tmp_path):
    _, shown = exposed(tmp_path)
    before = inputs.identity(shown)
    stat = shown.stat()
    os.chmod(shown, 0o644)
    shown.write_text("0 1 4\n0 2 2\n1 2 6\n")     # same size, one weight changed
    os.chmod(shown, 0o444)
    os.utime(shown, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = inputs.identity(shown)
    assert after[:5] == before[:5] and after != before
