"""A counterexample that needs a large graph, graded as a class gets it: a tpe whose next frontier
T is compacted into a list with room for 64 vertices (tests/fixtures/shrink/buggy.c, -DBUG=5), so a
frontier of more than 64 writes past it into the distances. No graph of at most 64 edges shows it
(each frontier vertex was improved through an edge of its own), so the issue's "at most 10 edges"
cannot be met, and the grader must say so rather than hand over a large graph as the smallest.
Graded through `grader grade` at the default config (configs/grading.toml) with the default
budget, beside a correct classmate; what is asserted holds whatever the budget bought (sizes and
words from the record's own runs, never seconds)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_shrink_class import FIXTURE, graded_class, pytestmark, record_of  # noqa: E402,F401

STUDENTS = {"overflow": "-DBUG=5 '-DBUG_METHOD=\"tpe\"'", "right": "-DBUG=0"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The two students graded once: (out, console)."""
    return graded_class(tmp_path_factory.mktemp("large"), STUDENTS)


def test_the_overflow_fixture_is_right_up_to_a_64_vertex_frontier_and_wrong_past_it(tmp_path):
    """The planted bug itself, run directly: a star of 64 leaves (one frontier of 64) is right, of
    65 wrong, and only in the method it is planted in. No graph of at most 64 edges can show it:
    each vertex of a frontier was improved through an edge of its own."""
    binary = tmp_path / "sssp"
    subprocess.run(["cc", "-O1", "-DBUG=5", '-DBUG_METHOD="tpe"', "-o", str(binary), str(FIXTURE)], check=True)

    def printed(leaves: int, method: str) -> list[str]:
        (tmp_path / "star.txt").write_text("".join(f"0 {v} {v}\n" for v in range(1, leaves + 1)))
        subprocess.run([str(binary), "--input", str(tmp_path / "star.txt"), "--output", str(tmp_path / "out.txt"),
                        "--method", method], check=True, capture_output=True)
        return (tmp_path / "out.txt").read_text().split()

    for leaves in (64, 65):
        right = ["0:0"] + [f"{v}:{v}" for v in range(1, leaves + 1)]
        assert printed(leaves, "bmf") == right
        assert (printed(leaves, "tpe") == right) == (leaves == 64), leaves


def test_a_tpe_whose_frontier_list_overflows_is_said_not_reproducible_on_small_graphs(graded):
    """No counterexample of <= 10 edges exists (none of <= 64), so the grader must say so: each
    tpe case's graph has more than 64 edges and is said, on the page, in results.json and on the
    console line naming the student, as not reproducible on small graphs (1-minimal), not
    reproduced within the budget, or not shrunk: never as a plain size."""
    out, console = graded
    record = record_of(out, "overflow")
    cases = [(e["method"], e["sync"]) for e in record["shrunk"] + record["skipped"] if e.get("edges")]
    assert sorted(cases) == [("tpe", "incore"), ("tpe", "outcore")] and not record["rejected"]
    first = record["shrunk"][0]
    assert first["triage"] == "reproduces"        # right on the 1-edge graph, wrong on every re-run
    [line] = [li for li in console.splitlines() if li.startswith("  overflow: counterexamples")]
    tests = json.loads((out / "overflow" / "results.json").read_text())["tests"]
    page = (out / "overflow" / "index.html").read_text()
    class_page = (out / "index.html").read_text()
    for entry in record["shrunk"]:
        assert entry["edges"] > 64 and entry["failed"] == entry["tried"] and not entry["race"], entry["edges"]
        found = f"the smallest failing graph found has {entry['edges']} edges"
        said = (f"not shrunk ({entry['edges']} edges, the failing course graph)" if entry["not_shrunk"] else
                f"not reproducible on small graphs: {found} (1-minimal: none of its edges can go)"
                if entry["stopped"].startswith("1-minimal") else
                f"not reproduced on a small graph within the budget: {found}")
        assert entry["not_shrunk"] or entry["not_small"]
        assert entry["size_said"] == said and f"tpe {entry['sync']}: {said}" in line, (said, line)
        [shown] = [t for t in tests if t["name"].startswith(f"Smallest failing graphs: tpe -sync {entry['sync']}")]
        assert shown["name"].endswith(f"({said})") and said in shown["output"]
        assert said in page and said in class_page
    for entry in (e for e in record["skipped"] if e.get("edges")):       # (not the random search's)
        assert entry["why"] == f"not shrunk ({entry['edges']} edges, the failing course graph)" and entry["why"] in line


def test_each_size_is_said_by_what_the_shrinking_found():
    """The words for a size (grader.sweep.counterexample.size_text), pure: a small graph plainly;
    the course graph itself "not shrunk"; a larger graph than SMALL_EDGES "not reproducible on
    small graphs" only when no edge of it can go (1-minimal), else "not reproduced ... within
    the budget"."""
    from grader.sweep.counterexample import SMALL_EDGES, size_text
    assert size_text({"edges": 1, "stopped": "1-minimal"}) == "1 edge"
    assert size_text({"edges": SMALL_EDGES, "stopped": "budget: 9 runs"}) == f"{SMALL_EDGES} edges"
    assert size_text({"edges": 6251, "not_shrunk": True, "stopped": "budget: 9 runs"}) == \
        "not shrunk (6251 edges, the failing course graph)"
    assert size_text({"edges": 65, "not_small": True, "stopped": "1-minimal"}) == \
        "not reproducible on small graphs: the smallest failing graph found has 65 edges (1-minimal: none of its edges can go)"
    assert size_text({"edges": 202, "not_small": True, "stopped": "budget: 13 runs"}) == \
        "not reproduced on a small graph within the budget: the smallest failing graph found has 202 edges"
