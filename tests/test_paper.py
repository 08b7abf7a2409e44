"""The paper set (report --paper), figures that carry their context, claims qualified by their
own measures, and skipped work said: from the hand-made fixture and synthetic sweeps."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from grader.commands import report as report_command  # noqa: E402
from report.load import load_results, measured, to_frame  # noqa: E402
from report.observations import work  # noqa: E402
from report.paperset_render import build_paper, render_paper  # noqa: E402
from report.plots import all_plots  # noqa: E402
from report.render import build_model, render_all  # noqa: E402
from report_fixtures import CPU, GPU, sweep_rows, write_rows  # noqa: E402
from sssp_common.sweepplan import PlanError, plan_path, read_plan, write_plan  # noqa: E402

FIXTURE = ROOT / "tests" / "data" / "results-fixture.jsonl"
ROAD, P2P = "roadNet-CA~synth", "p2p-Gnutella04"
ROAD_STANDIN = "stand-in for roadNet-CA at 1/10 of its edges"   # the fixture's road graph: 553,000 of 5.5M edges
NO_PDFLATEX = "pdflatex not on PATH (Debian: texlive-latex-base texlive-latex-recommended)"
EXPECTED = [("configurations", "Table 1"), ("ordering", "Figure 1"), ("sync", "Table 2"), ("segscan", "Table 3"),
            ("filtering", "Figure 2"), ("opt", "Table 4")]


@pytest.fixture(scope="module")
def fixture_frame():
    return load_results([FIXTURE])


@pytest.fixture(scope="module")
def paper(fixture_frame):
    return build_paper(fixture_frame, [FIXTURE])


# ---- the paper set -----------------------------------------------------------------------------

def test_one_numbered_exhibit_per_question_in_the_specs_order(paper):
    assert [(item.key, item.label) for item in paper.items] == EXPECTED
    for item in paper.items:
        assert (item.table is not None) == (item.kind == "table")
        assert item.kind == "table" or item.plot is not None, f"{item.label} has nothing drawn"
    configurations = paper.items[0].table
    assert configurations.columns[1:] == ["256×8", "384×5", "512×4", "768×2", "1024×2"]
    assert {label for label, _ in configurations.rows} >= {ROAD, P2P}


def test_each_caption_is_one_line_naming_device_graphs_statistic_and_repetitions(paper):
    for item in paper.items:
        caption = item.caption
        assert "\n" not in caption and caption.endswith(".")
        assert "GPU NVIDIA H100 80GB HBM3" in caption, item.label
        assert ROAD in caption and ROAD_STANDIN in caption and f"{P2P} (the real graph)" in caption, item.label
        assert "median" in caption and "2–3 per setting" in caption, item.label


def test_the_opt_exhibit_carries_its_intuition_and_counts(paper):
    opt = paper.items[-1]
    assert "worklist" in opt.intuition and "chain" in opt.intuition      # the spec's "simple example"
    assert "rounds opt / bmf" in opt.table.columns
    cells = dict(opt.table.rows)[ROAD]
    assert cells[opt.table.columns.index("rounds opt / bmf")].text == "1,850 / 612"


def test_a_students_paper_asks_for_their_intuition(tmp_path):
    path = write_rows(tmp_path / "r.jsonl", sweep_rows(seed=1, program="student-7"))
    model = build_paper(load_results([path]), [path], plots=False)
    assert model.items[-1].intuition.startswith("[Your optimization")


def test_a_cpu_paper_says_so_in_every_caption_and_figure(tmp_path):
    path = write_rows(tmp_path / "cpu.jsonl", sweep_rows(seed=1, device=CPU, reps=2, warmup=False))
    model = build_paper(load_results([path]), [path])
    for item in model.items:
        assert "CPU fallback (numpy), not a GPU" in item.caption and "GPU NVIDIA" not in item.caption
        if item.plot is not None:
            assert "CPU fallback (numpy), not a GPU" in item.plot.footer
    assert "simulates the grid" in model.items[0].caption


def test_renders_md_html_tex_with_the_same_numbers(paper, fixture_frame, tmp_path):
    written = render_paper(fixture_frame, [FIXTURE], tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in written}
    assert names == {"paper.md", "paper.html", "paper.tex", "paper-body.tex", "figures/paper-ordering.png",
                     "figures/paper-filtering.png"}
    md = (tmp_path / "paper.md").read_text(encoding="utf-8")
    html = (tmp_path / "paper.html").read_text(encoding="utf-8")
    body = (tmp_path / "paper-body.tex").read_text(encoding="utf-8")
    for _, label in EXPECTED:
        assert f"**{label}." in md and f"<strong>{label}." in html
    assert md.count("](figures/paper-") == 2 and html.count('src="data:image/png;base64,') == 2
    best_road_opt = "11.51"     # opt in-core's best total on the road stand-in, in every format
    assert best_road_opt in md and best_road_opt in html and best_road_opt in body
    assert body.count("\\caption{") == 6 and "\\documentclass" not in body
    md_only = render_paper(fixture_frame, [FIXTURE], tmp_path / "md", formats=("md",))   # its figures too
    assert sorted(p.name for p in md_only) == ["paper-filtering.png", "paper-ordering.png", "paper.md"]
    assert all(p.is_file() for p in md_only)


# ---- the LaTeX compiles in the USENIX page and fits six ------------------------------------------

def compile_paper(folder: Path) -> tuple[int, str]:
    """pdflatex paper.tex twice (labels settle); (pages by pypdf, the .aux)."""
    from pypdf import PdfReader
    for _ in range(2):
        result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=folder,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout[-3000:]
    log = (folder / "paper.log").read_text(encoding="latin-1")
    assert "Too many unprocessed floats" not in log
    overfull = [float(p) for p in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)]
    assert not [p for p in overfull if p > 1.0], "an exhibit is wider than its column or page"
    return len(PdfReader(folder / "paper.pdf").pages), (folder / "paper.aux").read_text(encoding="latin-1")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason=NO_PDFLATEX)
def test_paper_tex_compiles_in_six_pages_numbered_as_the_md(fixture_frame, tmp_path):
    render_paper(fixture_frame, [FIXTURE], tmp_path, formats=("tex",))
    pages, aux = compile_paper(tmp_path)
    assert 1 <= pages <= 6
    for key, label in EXPECTED:     # LaTeX's own numbers are the ones md and html print
        kind = "tab" if label.startswith("Table") else "fig"
        assert f"\\newlabel{{{kind}:paper-{key}}}{{{{{label.split()[1]}}}" in aux, label


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason=NO_PDFLATEX)
def test_six_graphs_still_fit_six_pages(tmp_path):
    """Each exhibit grows with the graphs; the USENIX paper still has room for the student's text."""
    rows = []
    for number in range(3):
        for row in sweep_rows(seed=number, reps=2, warmup=False):
            rows.append(dict(row, graph=row["graph"] + ("" if number == 0 else f"-{number}"),
                             run_id=f"{row['run_id']}-{number}"))
    path = write_rows(tmp_path / "six.jsonl", rows)
    out = tmp_path / "out"
    render_paper(load_results([path]), [path], out, formats=("tex",))
    pages, _ = compile_paper(out)
    assert pages <= 6


# ---- figures and LaTeX captions carry their context --------------------------------------------

def test_every_report_plot_names_the_device_and_the_stand_in(fixture_frame):
    model = build_model(fixture_frame, [FIXTURE])
    plots = [plot for section in model.sections for plot in section.plots]
    assert len(plots) == 8
    for plot in plots:
        assert "Device: GPU NVIDIA H100 80GB HBM3" in plot.footer and plot.caption.endswith(plot.footer + ".")
        assert (ROAD_STANDIN in plot.footer) == (plot.graph == ROAD)
    for plot in all_plots(measured(fixture_frame)):        # no catalogue: the name still says stand-in
        assert "NVIDIA H100" in plot.footer and ("stand-in" in plot.footer) == (plot.graph == ROAD)


def test_a_cpu_figure_never_looks_like_a_gpu_one(tmp_path):
    frame = measured(to_frame(sweep_rows(seed=2, device=CPU, reps=2, warmup=False)))
    for plot in all_plots(frame):
        assert "CPU fallback (numpy), not a GPU" in plot.footer and "GPU " + GPU not in plot.footer


def test_tables_tex_captions_name_device_and_graphs(fixture_frame, tmp_path):
    render_all(fixture_frame, [FIXTURE], tmp_path, formats=("tex",))
    tex = (tmp_path / "tables.tex").read_text(encoding="utf-8")
    captions = re.findall(r"\\caption\{(.*)\}", tex)
    assert len(captions) >= 5
    for caption in captions:
        assert "GPU NVIDIA H100 80GB HBM3" in caption
        assert "roadNet-CA" in caption or P2P in caption
    overview = next(c for c in captions if c.startswith("Fastest correct setting per graph"))
    assert "roadNet-CA\\textasciitilde{}synth (road-like stand-in" in overview and P2P in overview


# ---- claims qualified by their own measures ------------------------------------------------------

def tpe_work_sentence(rows) -> str:
    frame = measured(to_frame(rows))
    return next(o.text for o in work(frame, ROAD) if o.key == ("work", "tpe outcore"))


def test_fewer_relaxations_with_a_full_filtering_scan_is_not_called_less_work():
    """tpe relaxes each edge once where bmf relaxes it every round, but its filtering scans every
    edge every round: the sentence names both measures and calls no saving in edges read."""
    text = tpe_work_sentence(sweep_rows(seed=1))
    assert "600× fewer relaxations" in text
    assert "but its filtering scans 600 edges per graph edge" in text and "bmf out-of-core: none" in text
    assert "edges read (relaxed + scanned) per graph edge: 601 against 600: no less work" in text
    assert not re.search(r"\d× less work", text)


def test_a_cheap_filter_makes_it_less_work_and_says_so():
    rows = [dict(row, edges_filtered=row["graph_edges"] * 2 if row["method"] == "tpe" else 0)
            for row in sweep_rows(seed=1)]
    text = tpe_work_sentence(rows)
    assert "600× fewer relaxations" in text and "its filtering scans 2.00 edges per graph edge" in text
    assert "but" not in text and "200× less work" in text


def test_work_sentence_without_filtering_counts_claims_nothing_about_all_work():
    rows = [dict(row, edges_filtered=None) for row in sweep_rows(seed=1)]
    text = tpe_work_sentence(rows)
    assert "fewer relaxations" in text and "not recorded" in text and "less work" not in text


# ---- skipped work is said ----------------------------------------------------------------------

def test_a_sweep_records_its_skipped_graph_and_the_report_says_why(tmp_path, monkeypatch, capsys):
    from grader.commands import sweep
    from test_sweep import FIGURE1, stand_in_config
    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    # a graph that is there but cannot be prepared (a missing one stops the sweep before it starts)
    (tmp_path / "broken.txt").write_text("0 1 x\n")
    config = stand_in_config(tmp_path, [FIGURE1, tmp_path / "broken.txt"], methods={"ok": "ok"})
    results = tmp_path / "r.jsonl"
    assert sweep.run(config=config, results=results, quiet=True) == 0
    capsys.readouterr()
    plan = read_plan(results)
    assert set(plan["skipped"]) == {"broken"} and len(plan["cells"]) == 2
    model = build_model(load_results([results]), [results], plots=False)
    said = [line for line in model.summary if line.startswith("Not run: broken")]
    assert len(said) == 1 and "all 1 planned cells (ok outcore): skipped by the sweep:" in said[0]
    assert not any("figure1" in line and "No result" in line for line in model.summary)


class PlannedCell:
    def __init__(self, row):
        self.__dict__.update(row)
        self.program, self.program_id = row["program"], row.get("program_id", "")


def test_cells_without_a_result_are_named_per_method(tmp_path):
    rows = sweep_rows(seed=1, reps=2, warmup=False)
    path = tmp_path / "r.jsonl"
    missing = [r for r in rows if r["graph"] == P2P and r["method"] == "tpe" and r["sync"] == "incore"]
    write_rows(path, [r for r in rows if r not in missing])
    write_plan(path, [PlannedCell(r) for r in rows] + [PlannedCell(dict(rows[0], graph="soc-pokec", run_id="x"))],
               {"soc-pokec": "not downloaded (python -m grader fetch soc-pokec)"})
    summary = build_model(load_results([path]), [path], plots=False).summary
    assert f"No result on {P2P} for {len(missing)} of {sum(r['graph'] == P2P for r in rows)} planned cells: " \
           f"tpe incore ({len(missing)}: source 256×8 #0, source 256×8 #1, source 384×5 #0" in "\n".join(summary)
    assert any(line.startswith("Not run: soc-pokec, all 1 planned cells (bmf outcore): skipped by the sweep: "
                               "not downloaded") for line in summary)
    assert not any(line.startswith(f"No result on {ROAD}") for line in summary)


def test_results_without_a_plan_say_what_cannot_be_listed(fixture_frame):
    summary = build_model(fixture_frame, [FIXTURE], plots=False).summary
    assert any(line.startswith("No sweep plan beside the results") for line in summary)
    assert f"Not in the results for {P2P}: opt outcore, opt incore (run on other graphs of this report)." in summary


def test_a_broken_plan_is_one_warning_not_a_crash(tmp_path):
    path = write_rows(tmp_path / "r.jsonl", sweep_rows(seed=1, reps=2, warmup=False))
    assert read_plan(path) is None
    plan_path(path).write_text("{not json")
    with pytest.raises(PlanError, match="r.jsonl.plan.json: not a sweep plan"):
        read_plan(path)
    summary = build_model(load_results([path]), [path], plots=False).summary
    assert any("r.jsonl.plan.json: not a sweep plan" in line for line in summary)


# ---- the command --------------------------------------------------------------------------------

def test_cli_paper_writes_the_paper_set(tmp_path, capsys):
    code = report_command.run(results=[FIXTURE], out_dir=tmp_path, formats=("md", "tex"), paper=True)
    printed = capsys.readouterr().out.split()
    assert code == 0
    assert sorted(Path(p).name for p in printed) == ["paper-body.tex", "paper-filtering.png", "paper-ordering.png",
                                                     "paper.md", "paper.tex"]
    assert not (tmp_path / "report.md").exists()
