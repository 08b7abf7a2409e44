"""grader.jail.uids in temporary lock homes: the lowest free slot, never one another holder has
(another process, or this one through another lease), given back when a jail ends or its
process dies, and a lock folder someone else made or a link is never used."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.jail import uids

ROOT = Path(__file__).resolve().parents[1]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user's needs root")


def homes(tmp_path: Path, *names: str) -> tuple[Path, ...]:
    return tuple(tmp_path / name for name in (names or ("run",)))


def test_the_slot_folder_is_made_private_inside_the_first_usable_home(tmp_path):
    made = uids.slot_folder(homes(tmp_path, "a/b"))
    assert made == tmp_path / "a" / "b" / "slots"
    assert made.is_dir() and (made.stat().st_mode & 0o777) == 0o700
    assert ((tmp_path / "a" / "b").stat().st_mode & 0o777) == 0o700
    assert uids.slot_folder(homes(tmp_path, "a/b")) == made              # made once, then remembered


def test_a_home_left_open_by_someone_is_closed_again(tmp_path):
    (tmp_path / "open").mkdir(mode=0o777)
    os.chmod(tmp_path / "open", 0o777)
    uids.slot_folder(homes(tmp_path, "open"))
    assert ((tmp_path / "open").stat().st_mode & 0o777) == 0o700


def test_a_home_that_is_a_link_or_a_file_is_passed_over_for_the_next(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "link")
    (tmp_path / "file").write_text("x")
    made = uids.slot_folder(homes(tmp_path, "link", "file", "good"))
    assert made == tmp_path / "good" / "slots"
    assert not (tmp_path / "elsewhere" / "slots").exists()


def test_slots_that_are_a_link_are_refused(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "target").mkdir()
    os.symlink(tmp_path / "target", tmp_path / "run" / "slots")
    with pytest.raises(OSError) as refused:
        uids.slot_folder(homes(tmp_path))
    assert str(refused.value) == f"no folder for the grader's uid slots: {tmp_path / 'run' / 'slots'} is not a folder of this user's"


@ROOT_ONLY
def test_a_home_or_slots_folder_another_user_made_first_is_never_used(tmp_path):
    (tmp_path / "theirs").mkdir()
    os.chown(tmp_path / "theirs", 4242, 4242)
    (tmp_path / "mine" / "slots").mkdir(parents=True)
    os.chown(tmp_path / "mine" / "slots", 4242, 4242)
    with pytest.raises(OSError) as refused:
        uids.slot_folder(homes(tmp_path, "theirs", "mine"))
    assert str(refused.value) == (f"no folder for the grader's uid slots: {tmp_path / 'theirs'} is not a folder of "
                                  f"this user's; {tmp_path / 'mine' / 'slots'} is not a folder of this user's")


def test_no_usable_home_says_why_for_each(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError, match="^no folder for the grader's uid slots: .*file/sub: Not a directory$"):
        uids.slot_folder(homes(tmp_path, "file/sub"))


def test_leases_take_the_lowest_free_slot_and_give_it_back(tmp_path):
    where = homes(tmp_path)
    with uids.lease(where) as first, uids.lease(where) as second:
        assert (first, second) == (0, 1)
        with uids.lease(where) as third:
            assert third == 2
    with uids.lease(where) as again:
        assert again == 0
        with uids.lease(where) as next_one:
            assert next_one == 1
    assert sorted(os.listdir(uids.slot_folder(where))) == ["0", "1", "2"]


def test_a_slot_another_process_holds_is_never_handed_out_and_is_free_when_it_dies(tmp_path):
    where = homes(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; sys.path.insert(0, %r); from pathlib import Path; from grader.jail import uids\n"
        "print(uids.claimed_slot((Path(%r),)), flush=True); time.sleep(60)") % (str(ROOT), str(where[0]))],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "0"
        with uids.lease(where) as mine:
            assert mine == 1
    finally:
        holder.kill()
        holder.wait()
    with uids.lease(where) as mine:
        assert mine == 0


def test_a_process_keeps_its_claimed_slot_and_a_forked_child_claims_its_own(tmp_path, monkeypatch):
    where = homes(tmp_path)
    monkeypatch.setattr(uids, "_held", None)
    assert not uids.holding()
    slot = uids.claimed_slot(where)
    assert uids.claimed_slot(where) == slot and uids.holding()
    with uids.lease(where) as other:
        assert other != slot
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                       # the child: the parent's lock is not its own
        try:
            os.write(write, f"{int(uids.holding())} {uids.claimed_slot(where)}".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    held, child_slot = os.read(read, 100).decode().split()
    os.close(read)
    assert held == "0" and int(child_slot) != slot
    os.close(uids._held[2])


def test_when_every_slot_is_taken_the_next_jail_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(uids, "SLOTS", 2)
    where = homes(tmp_path)
    with uids.lease(where), uids.lease(where):
        with pytest.raises(OSError, match="^all 2 grader uids are in use on this machine$"):
            with uids.lease(where):
                pass
