"""grader.data.inputs: every run gets the spec's input format (plain `src dst w`, 0-based, no comments),
made once per content and ordering, read-only; the reference is computed on exactly that file."""
from __future__ import annotations

import gzip
import os
import stat

from grader.data import inputs
from grader.sweep.graphs import prepare_graph
from grader.sweep.config import load_config


def dimacs(tmp_path):
    path = tmp_path / "g.gr.gz"
    # 5 declared vertices; 4 and 5 have no edges, so the spec's n (largest id + 1) is 3
    path.write_bytes(gzip.compress(b"c a comment\np sp 5 3\na 1 2 4\na 2 3 7\na 1 3 20\n"))
    return path


def test_dimacs_gz_becomes_plain_zero_based_weighted_lines(tmp_path):
    made = inputs.spec_input(dimacs(tmp_path), "given", tmp_path / "cache")
    assert made.read_text() == "0 1 4\n1 2 7\n0 2 20\n"
    assert stat.S_IMODE(made.stat().st_mode) == 0o444
    assert inputs.spec_input(dimacs(tmp_path), "given", tmp_path / "cache") == made      # made once
    by_destination = inputs.spec_input(made, "destination", tmp_path / "cache")
    assert by_destination.read_text() == "0 1 4\n0 2 20\n1 2 7\n"
    snap = tmp_path / "s.txt"
    snap.write_text("# comment\n0\t1\n1\t2\n")
    assert inputs.spec_input(snap, "given", tmp_path / "cache").read_text() == "0 1 1\n1 2 1\n"   # weights written


def test_exposed_inputs_are_read_only_in_a_folder_the_program_cannot_write(tmp_path):
    made = inputs.spec_input(dimacs(tmp_path), "source", tmp_path / "cache")
    shown = inputs.expose(made, tmp_path / "shown")
    assert shown.read_bytes() == made.read_bytes() and os.path.samefile(shown, made)
    assert stat.S_IMODE(shown.stat().st_mode) == 0o444 and stat.S_IMODE((tmp_path / "shown").stat().st_mode) == 0o755
    before = inputs.identity(shown)
    assert inputs.expose(made, tmp_path / "shown") == shown and inputs.identity(shown) == before   # untouched
    os.chmod(shown, 0o644)
    assert inputs.identity(shown) != before


def test_the_reference_is_computed_on_what_the_program_reads(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(f'graphs = ["{dimacs(tmp_path)}"]\nconfigs = [[256, 8]]\nmethods = ["bmf"]\n')
    graph = prepare_graph(str(dimacs(tmp_path)), load_config(config), {"given", "source"}, tmp_path / "cache")
    assert graph.reference.tolist() == [0, 4, 11] and graph.vertices == 3 and graph.edges == 3
    assert set(graph.ordered) == {"given", "source"} and graph.reference_checksum
    assert all(graph.identities[o] == inputs.identity(graph.ordered[o]) for o in graph.ordered)
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700    # an explicit cache: private
