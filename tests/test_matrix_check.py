"""Nothing runs until the whole matrix is known to be runnable (issue 38, item 2): through the
command entry points, every misspelt or unavailable graph, method, sync, ordering, block
configuration or placeholder exits 2 with one line naming the file, the key and the nearest
valid name, before a cell is listed or run; grade refuses a missing graph and says how to fetch it."""
from __future__ import annotations

import subprocess
import sys

import pytest

from grader.__main__ import main
from tests.conftest import ROOT

SWEEP = (ROOT / "configs" / "sweep.toml").read_text()
GRADING = ROOT / "configs" / "grading.toml"


pytestmark = pytest.mark.usefixtures("fresh_clone")    # tests/conftest.py: only the carried graphs


def sweep_config(tmp_path, old: str, new: str) -> str:
    assert old in SWEEP, old
    path = tmp_path / "typo.toml"
    path.write_text(SWEEP.replace(old, new, 1))
    return str(path)


def one_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err and not captured.out   # no cell listed
    return captured.err


@pytest.mark.parametrize("old,new,expected", [
    ("[methods.tpe]", "[methods.tep]", "key 'methods.tep': unknown method 'tep'; did you mean 'tpe'?"),
    ("configs = [[256, 8], [384, 5]", "configs = [[100, 2], [384, 5]",
     "key 'configs': [100, 2]: block size 100 is not a multiple of 32 in 32..1024; did you mean [96, 2]?"),
    ("configs = [[256, 8], [384, 5]", "configs = [[2048, 2], [384, 5]", "did you mean [1024, 2]?"),
    ("configs = [[256, 8], [384, 5]", "configs = [[256, 0], [384, 5]", "key 'configs': [256, 0]"),
    ('orderings = ["given", "source", "destination"]', 'orderings = ["given", "sorce"]',
     "key 'orderings': 'sorce' is not one of given, source, destination; did you mean 'source'?"),
    ('syncs = ["outcore", "incore"]', 'syncs = ["outcore", "incor"]', "did you mean 'incore'?"),
    ("-input {input}", "-input {inptu}", "key 'program.command': unknown placeholder(s) {inptu}; "
                                         "did you mean '{input}'?"),
    ('"roadNet-CA~synth",', '"roadNet-CA~synt",', "key 'graphs': unknown graph 'roadNet-CA~synt'; "
                                                   "did you mean 'roadNet-CA~synth'?"),
    ('orderings = ["given", "source", "destination"]', 'ordering = ["given"]', "did you mean 'orderings'?"),
])
def test_a_typo_in_a_sweep_config_stops_the_dry_run(tmp_path, capsys, old, new, expected):
    config = sweep_config(tmp_path, old, new)
    assert main(["sweep", "--config", config, "--dry-run"]) == 2
    line = one_line(capsys)
    assert line.startswith(f"grader sweep: {config}: ") and expected in line


@pytest.mark.parametrize("option,expected", [
    (["--graphs", "roadNet-CA~synt"], "--graphs: unknown graph 'roadNet-CA~synt'; did you mean 'roadNet-CA~synth'?"),
    (["--methods", "bfm"], "--methods: not in this sweep: bfm"),
    (["--methods", "tep"], "did you mean 'tpe'?"),
])
def test_a_typo_on_the_sweep_command_line(capsys, option, expected):
    assert main(["sweep", "--dry-run", *option]) == 2
    line = one_line(capsys)
    assert "configs/sweep.toml: " in line and expected in line


def test_the_known_case_as_a_user_types_it(tmp_path):
    """`python -m grader sweep --graphs roadNet-CA~synt --dry-run` listed 211 cells and exited 0."""
    done = subprocess.run([sys.executable, "-m", "grader", "sweep", "--graphs", "roadNet-CA~synt", "--dry-run"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().endswith("did you mean 'roadNet-CA~synth'?") and done.stderr.count("\n") == 1


def test_a_method_the_program_does_not_know_is_refused_only_for_sssp(tmp_path, capsys):
    """{sssp} (this checkout's or a student's build) knows the vocabulary's words; a program of the
    config's own (no {sssp}: the tests' stand-in programs) may name its methods as it likes."""
    config = sweep_config(tmp_path, "[methods.opt]", "[methods.fast]\nrun_as = \"fsat\"\n[methods.opt]")
    assert main(["sweep", "--config", config, "--dry-run"]) == 2
    assert "key 'methods.fast.run_as': unknown method 'fsat'" in one_line(capsys)
    own = sweep_config(tmp_path, "{sssp} -input", "{python} prog.py -input")
    own_text = open(own).read().replace("[methods.tpe]", "[methods.tep]")
    open(own, "w").write(own_text)
    assert main(["sweep", "--config", own, "--dry-run", "--graphs", "figure1"]) == 0
    assert " tep " in capsys.readouterr().out


def test_grade_refuses_a_typo_in_graphs_before_anything(tmp_path, capsys):
    out = tmp_path / "graded"
    assert main(["grade", str(tmp_path), "--out", str(out), "--graphs", "figure1,rome"]) == 2
    line = one_line(capsys)
    assert line.startswith("grader grade: ") and "--graphs: unknown graph 'rome'; did you mean 'rome99'?" in line
    assert not out.exists()


def test_grade_refuses_a_missing_graph_and_says_how_to_fetch_it(tmp_path, capsys):
    config = tmp_path / "grading.toml"
    config.write_text(GRADING.read_text().replace('"p2p-Gnutella04",', '"p2p-Gnutella04", "p2p-Gnutella08",', 1)
                      .replace('rubric = "rubric.toml"', f'rubric = "{ROOT / "configs" / "rubric.toml"}"'))
    out = tmp_path / "graded"
    assert main(["grade", str(tmp_path), "--out", str(out), "--config", str(config)]) == 2
    line = one_line(capsys)
    assert f"{config}: key 'graphs': p2p-Gnutella08: p2p-Gnutella08.txt.gz not found" in line
    assert "run `python -m grader fetch p2p-Gnutella08`" in line and not out.exists()


def test_sweep_refuses_a_missing_graph_even_to_list_it(capsys):
    assert main(["sweep", "--dry-run", "--graphs", "soc-pokec"]) == 2
    line = one_line(capsys)
    assert "python -m grader fetch soc-pokec" in line and "soc-pokec~synth" in line


def test_the_default_sweep_lists_its_cells_on_a_fresh_clone(capsys):
    assert main(["sweep", "--dry-run"]) == 0
    listed = capsys.readouterr().out
    assert " p2p-Gnutella04 " in listed and "624 cells" in listed
