"""Winnowing similarity (grader.grading.similarity): a copy with renamed variables and reordered
functions ranks first among five submissions; the course's sample code and the class-wide
skeleton do not count; identifiers, comments and layout do not change the fingerprints."""
from __future__ import annotations

import shutil
from pathlib import Path

from grader.grading import similarity

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "similarity"
STUDENTS = ("alice", "bob", "carol", "dave", "eve")   # eve: alice's code renamed, reordered, re-laid-out


def trees(names=STUDENTS) -> dict[str, Path]:
    return {name: FIXTURES / name for name in names}


def test_renamed_and_reordered_copy_ranks_first():
    pairs = similarity.compare(trees(), sample_code=FIXTURES / "sample", top=10)
    assert len(pairs) == 10                       # every pair of five
    first = pairs[0]
    assert (first.a, first.b) == ("alice", "eve")
    assert first.score > 0.6 and first.score > 5 * pairs[1].score
    # both functions are found, each in its own region, in the files they live in
    described = [r.describe() for r in first.regions]
    assert any(d.startswith("sssp.cu:") and "kernels.cu:" in d for d in described)
    assert len({(r.a_first // 20) for r in first.regions}) >= 2, described


def test_renaming_and_layout_leave_tokens_unchanged():
    one = similarity.tokenize("int total = a + b; // sum\n")
    two = similarity.tokenize("int   s=x\n+y;/* other */")
    assert [t.text for t in one] == [t.text for t in two] == ["int", "V", "=", "V", "+", "V", ";"]
    assert two[-1].line == 2
    kernel = similarity.tokenize('__global__ void k() { __shared__ int v[32]; printf("%d", 0x1F); }')
    assert [t.text for t in kernel][:4] == ["__global__", "void", "V", "("]
    assert "S" in [t.text for t in kernel] and "N" in [t.text for t in kernel]


def test_sample_code_is_excluded(tmp_path):
    # two students who share nothing but the sample's main.cu: similar without the base, not with it
    for name in ("bob", "dave"):
        shutil.copytree(FIXTURES / name, tmp_path / name)
    two = {name: tmp_path / name for name in ("bob", "dave")}
    without = similarity.compare(two)[0]
    with_base = similarity.compare(two, sample_code=FIXTURES / "sample")[0]
    assert without.score > 0.15
    assert with_base.score < 0.1 and with_base.shared < without.shared


def test_class_wide_skeleton_does_not_count():
    # every student has the sample's main.cu; without --sample-code it still drops out (shared by all)
    pairs = similarity.compare(trees())
    assert all(p.score < 0.1 for p in pairs if {p.a, p.b} != {"alice", "eve"}), [(p.a, p.b, p.score) for p in pairs]
    # but three of a small class sharing code is not a skeleton: it is what the check is for
    three = similarity.compare(trees(("bob", "carol", "dave")))
    assert all(p.score > 0.1 for p in three)


def test_winnowing_guarantee():
    # any shared run of k + w - 1 tokens leaves a shared fingerprint, wherever it sits
    body = " ".join(f"x{i} = y{i} * {i} + z;" for i in range(6))     # 42 tokens, over k + w - 1 = 19
    a = similarity.fingerprint(similarity.tokenize("int f() {" + body + "}"))
    b = similarity.fingerprint(similarity.tokenize("void g(int q) { while (q) { q--; } " + body + " return; }"))
    assert a.hashes() & b.hashes()


def test_sources_only_and_no_links(tmp_path):
    (tmp_path / "a.cu").write_text("int main() { return 0; }\n")
    (tmp_path / "notes.txt").write_text("not code\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.c").write_text("int y;\n")
    (tmp_path / "link.c").symlink_to(tmp_path / "a.cu")
    assert [p.name for p in similarity.source_files(tmp_path)] == ["a.cu"]
