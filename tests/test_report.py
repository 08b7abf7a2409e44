"""The report: from a hand-made results fixture (failures, a timeout, a missing method) to md/html/tex."""
from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from grader.commands import report as report_command  # noqa: E402
from report.latex import latex_escape  # noqa: E402
from report.load import load_results, measured, programs  # noqa: E402
from report.plots import all_plots  # noqa: E402
from report.render import build_model, render_all, render_reports  # noqa: E402
from report.tables import time_table  # noqa: E402
from report_fixtures import CPU, sweep_rows, write_rows  # noqa: E402
from sssp_common.record import read_rows  # noqa: E402

FIXTURE = ROOT / "tests" / "data" / "results-fixture.jsonl"
ROAD, P2P = "roadNet-CA~synth", "p2p-Gnutella04"
WRONG_TIME = "777.7"  # computation_ms of the wrong runs in the fixture: must never be shown
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def frame():
    return load_results([FIXTURE])


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, frame):
    out = tmp_path_factory.mktemp("report")
    written = render_all(frame, [FIXTURE], out)
    return out, written


# ---- loading --------------------------------------------------------------------------------

def test_torn_last_line_is_tolerated(tmp_path, frame):
    torn = tmp_path / "torn.jsonl"
    torn.write_text(FIXTURE.read_text() + '{"run_id": "deadbeef", "graph": "roadNet-CA~s')
    assert len(load_results([torn])) == len(frame)


def test_bad_middle_line_is_skipped_with_a_warning(tmp_path, capsys):
    lines = FIXTURE.read_text().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines[:5] + ["not json"] + lines[5:]) + "\n")
    assert len(read_rows(broken)) == len(lines)
    assert "broken.jsonl:6" in capsys.readouterr().err


def test_latest_row_per_run_id_wins(frame):
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    assert len(frame) == len({r["run_id"] for r in rows}) == len(rows) - 1
    rerun = frame[(frame.graph == ROAD) & (frame.variant == "bmf outcore") & (frame.ordering == "source")
                  & (frame.config == "256×8") & (frame.rep == 0)]
    assert list(rerun.status) == ["ok"]  # the resumed sweep's re-run, not the stale timeout


def test_typed_columns_and_labels(frame):
    assert str(frame["bsize"].dtype) == "Int64" and frame["computation_ms"].dtype == "float64"
    assert {"bmf outcore", "bmf incore", "segscan", "tpe outcore", "tpe incore", "opt outcore",
            "opt incore"} == set(frame["variant"])
    assert {"256×8", "384×5", "512×4", "768×2", "1024×2"} == set(frame["config"])


# ---- tables from the hand-made fixture ------------------------------------------------------

def test_failed_cells_show_their_status_not_a_time(frame):
    road = time_table(measured(frame), ROAD)
    assert road.cell("bmf out · src", "512×4").text == "305.7 [300.0–310.0]"
    wrong = road.cell("bmf in · given", "384×5")
    assert wrong.state == "failed" and wrong.text == "✗ wrong (12)"
    assert road.cell("bmf in · dst", "1024×2").text == "✗ timeout"
    assert time_table(measured(frame), P2P).cell("segscan · dst", "256×8").text == "✗ malformed"
    crashed = time_table(measured(frame), P2P).cell("tpe in · src · comp.", "768×2")
    assert crashed.state == "mixed" and "crash 1/2" in crashed.text


# ---- plots ----------------------------------------------------------------------------------

def test_plots_are_png_with_captions(frame):
    plots = all_plots(measured(frame))
    assert {p.id.split("-")[0] for p in plots} == {"configs", "tpe", "speedup", "ordering"}
    assert all(p.png.startswith(PNG_MAGIC) for p in plots)
    assert "opt outcore: not run" in next(p for p in plots if p.id == "speedup-p2p-gnutella04").caption


# ---- rendered files -------------------------------------------------------------------------

class HtmlInventory(HTMLParser):
    """Tables (id, caption, cells, inside a closed <details> or not, in a .scroll or not) and URLs of a page."""

    def __init__(self):
        super().__init__()
        self.tables, self.images, self.urls, self.tags, self.order = {}, [], [], [], []
        self.cells: dict[str, list[tuple[str, str]]] = {}
        self.collapsed, self.scrolled = set(), set()
        self._caption_of = self._table = self._cell = None
        self._details: list[bool] = []   # open flag of each enclosing <details>
        self._divs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if attrs.get("id"):
            self.order.append(attrs["id"])
        for key in ("src", "href", "srcset", "data", "action"):
            if key in attrs:
                self.urls.append((tag, key, attrs[key]))
        if tag == "details":
            self._details.append("open" in attrs)
        elif tag == "div":
            self._divs.append(attrs.get("class", ""))
        elif tag == "table":
            self._table = attrs.get("id", "")
            self.tables[self._table], self.cells[self._table] = "", []
            if not all(self._details):
                self.collapsed.add(self._table)
            if self._divs and self._divs[-1] == "scroll":
                self.scrolled.add(self._table)
        elif tag == "caption":
            self._caption_of = self._table
        elif tag == "img":
            self.images.append(attrs.get("src", ""))
        elif tag == "td":
            self._cell = [attrs.get("class", ""), ""]

    def handle_endtag(self, tag):
        if tag == "details" and self._details:
            self._details.pop()
        elif tag == "div" and self._divs:
            self._divs.pop()
        elif tag == "caption":
            self._caption_of = None
        elif tag == "td" and self._cell is not None:
            self.cells[self._table].append(tuple(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._caption_of is not None:
            self.tables[self._caption_of] += data
        if self._cell is not None:
            self._cell[1] += data


def page_of(path: Path) -> HtmlInventory:
    page = HtmlInventory()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def test_writes_three_formats_and_figures(rendered):
    out, written = rendered
    names = {p.relative_to(out).as_posix() for p in written}
    assert {"report.md", "report.html", "tables.tex"} <= names
    assert len([n for n in names if n.startswith("figures/") and n.endswith(".png")]) == 8
    assert not list(out.rglob("*.tmp"))


def test_html_is_self_contained_with_every_table_scrollable(rendered):
    out, _ = rendered
    page = page_of(out / "report.html")
    html = (out / "report.html").read_text(encoding="utf-8")
    expected = ["overview", "graphs", "status", "failures", "provenance"] + [
        f"{kind}-{graph}" for kind in ("methods", "times") for graph in ("roadnet-ca-synth", "p2p-gnutella04")]
    for table_id in expected:
        assert page.tables.get(table_id, "").strip(), table_id
    assert set(page.tables) - {"provenance"} <= page.scrolled       # every data table can scroll sideways
    assert len(page.images) == 8
    for src in page.images:
        header, _, payload = src.partition(",")
        assert header == "data:image/png;base64" and base64.b64decode(payload, validate=True).startswith(PNG_MAGIC)
    for tag, key, url in page.urls:
        assert url.startswith(("data:", "#")), f"external reference <{tag} {key}={url!r}>"
    assert "link" not in page.tags and "script" not in page.tags
    assert not re.search(r"url\(\s*['\"]?(?!data:)", html) and "@import" not in html


def test_html_summary_first_then_failures_then_collapsed_counts(rendered):
    out, _ = rendered
    page = page_of(out / "report.html")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert page.order.index("summary") < page.order.index("provenance")
    assert page.order.index("correctness") < page.order.index("overview")     # failures before long tables
    assert "failures" not in page.collapsed
    summary = html[html.index('id="summary"'):html.index('id="provenance"')]
    assert "Failed: 8 run(s)" in summary and "fastest" in summary and "225 measured runs" in summary
    assert "<h3>Plots" not in html        # plots sit in <details>, never under an empty heading
    failed = [text for cls, text in page.cells["times-roadnet-ca-synth"] if cls == "failed"]
    assert sorted(failed) == ["✗ timeout", "✗ wrong (12)"]
    for name in ("report.html", "report.md", "tables.tex"):
        assert WRONG_TIME not in (out / name).read_text(encoding="utf-8"), name


def test_provenance_up_front(rendered):
    out, _ = rendered
    html = (out / "report.html").read_text(encoding="utf-8")
    head = html[:html.index("<main>")]
    for fact in ("SSSP on the GPU (NVIDIA H100 80GB HBM3)", "gpu-node-07", "01ede76", "2024-11-22T14:00:04Z",
                 "2–3 per setting", "stand-in", "roadNet-CA: 1,971,281 / 5,533,214", "real file"):
        assert fact in head, fact


def test_a_cpu_report_is_not_titled_gpu(tmp_path, monkeypatch):
    monkeypatch.setattr("report.render.all_plots", lambda frame, *footers: [])
    path = write_rows(tmp_path / "cpu.jsonl", sweep_rows(seed=1, device=CPU))
    render_all(load_results([path]), [path], tmp_path / "out", formats=("md", "html"))
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# SSSP sweep report: CPU fallback (numpy), not a GPU")
    assert "on the GPU" not in md and "warm-up run(s) not used" in md
    assert "no claim about configurations" in md
    render_all(load_results([path]), [path], tmp_path / "out", formats=("html",))
    page = page_of(tmp_path / "out" / "report.html")
    assert "status" in page.collapsed and "failures" not in page.tables     # all ok: the counts fold away
    assert page.order.index("overview") < page.order.index("correctness")


def test_warmup_runs_never_show(tmp_path):
    path = write_rows(tmp_path / "r.jsonl", sweep_rows(seed=1))
    model = build_model(load_results([path]), [path], plots=False)
    assert model.provenance["warmups"] == 130 and model.provenance["repetitions"] == "3 per setting"
    road = next(s for s in model.sections if s.graph == ROAD)
    cells = [c for _, row in road.tables[1].rows for c in row]
    assert all(c.n_runs == 3 for c in cells)


def test_markdown_tables_and_images(rendered):
    out, _ = rendered
    md = (out / "report.md").read_text(encoding="utf-8")
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md):
        assert (out / image).is_file(), image
    assert "| bmf out · src | 311.8 [311.8–318.4] |" in md or "| bmf out · src |" in md
    assert "305.7 [300.0–310.0]" in md and "✗ wrong (12)" in md and "✗ timeout" in md


# ---- one program per report -----------------------------------------------------------------

@pytest.fixture()
def two_programs(tmp_path, monkeypatch):
    monkeypatch.setattr("report.render.all_plots", lambda frame, *footers: [])   # plots are tested above; time
    rows = sweep_rows(seed=1) + sweep_rows(seed=2, program="student-7", program_id="sha256:5eed", device=CPU)
    return write_rows(tmp_path / "two.jsonl", rows)


def test_two_programs_are_never_merged(two_programs, tmp_path, capsys):
    frame = load_results([two_programs])
    assert [(key, label) for key, label, _ in programs(frame)] == [("project", "project"),
                                                                    ("sha256:5eed", "student-7")]
    with pytest.raises(ValueError, match="several programs"):
        build_model(frame, [two_programs])
    out = tmp_path / "out"
    assert report_command.run([two_programs], out, formats=("md",)) == 0
    err = capsys.readouterr().err
    assert "2 programs" in err and "student-7" in err and "project" in err
    project = (out / "project" / "report.md").read_text(encoding="utf-8")
    student = (out / "student-7" / "report.md").read_text(encoding="utf-8")
    assert "NVIDIA H100" in project and "CPU (numpy)" not in project
    assert "CPU (numpy)" in student and "NVIDIA H100" not in student and "sha256:5eed" in student
    assert not (out / "report.md").exists()


def test_program_option_picks_one_or_explains(two_programs, tmp_path, capsys):
    assert report_command.run([two_programs], tmp_path / "one", formats=("md",), program="student-7") == 0
    assert "CPU fallback" in (tmp_path / "one" / "report.md").read_text(encoding="utf-8")
    assert report_command.run([two_programs], tmp_path / "id", formats=("md",), program="sha256:5eed") == 0
    assert report_command.run([two_programs], tmp_path / "none", formats=("md",), program="nobody") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nobody" in err[0] and "student-7" in err[0] and "project" in err[0]
    written = render_reports(load_results([two_programs]), [two_programs], tmp_path / "split", ("md",))
    assert {p.parent.name for p in written if p.name == "report.md"} == {"project", "student-7"}


# ---- tables.tex -----------------------------------------------------------------------------

def strip_escaped(tex: str) -> str:
    """The TeX body without comments and without escaped specials (\\{ \\% ...), for counting."""
    lines = (re.sub(r"\\[{}%$&#_]", "", line).split("%", 1)[0] for line in tex.splitlines())
    return "\n".join(lines)


def test_tables_tex_is_booktabs_balanced_and_fenced(rendered):
    out, _ = rendered
    tex = (out / "tables.tex").read_text(encoding="utf-8")
    assert tex.startswith("%") and "\\usepackage{booktabs}" in tex.splitlines()[1]
    body = strip_escaped(tex)
    floats = len(re.findall(r"\\begin\{table\*?\}", body))
    assert floats == 3 + 2 * 2                       # overview, graphs, status, per graph: methods + times
    for command in ("\\toprule", "\\bottomrule", "\\caption{", "\\label{tab:"):
        assert body.count(command) == floats, command
    assert body.count("\\clearpage") == 1 + 2        # after the overview block and after each graph
    depth = 0
    for char in body:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0
    stack = []
    for kind, name in re.findall(r"\\(begin|end)\{(\w+\*?)\}", body):
        if kind == "begin":
            stack.append(name)
        else:
            assert stack.pop() == name
    assert not stack and tex.isascii()
    assert "roadNet-CA\\textasciitilde{}synth" in tex and "512$\\times$4" in tex
    assert "\\textit{wrong (12)}" in tex and "\\textit{timeout}" in tex
    assert re.search(r"(?<!\\)_", body) is None


def test_latex_escape():
    assert latex_escape("a_b 50% & #1 ~x {y} 3×4 † é ☃") == \
        r"a\_b 50\% \& \#1 \textasciitilde{}x \{y\} 3$\times$4 $^\dagger$ e ?"


USENIX_SHAPE = ("\\documentclass[letterpaper,twocolumn,10pt]{article}\n"
                "\\usepackage[margin=0.75in]{geometry}\n\\setlength{\\columnsep}{0.33in}\n"
                "\\usepackage{booktabs}\n\\begin{document}\n\\input{tables.tex}\n\\end{document}\n")


def compile_tex(tables: Path, folder: Path) -> str:
    """pdflatex a USENIX-shaped document that \\inputs tables.tex whole; returns the log."""
    shutil.copy(tables, folder / "tables.tex")
    (folder / "main.tex").write_text(USENIX_SHAPE)
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex"], cwd=folder,
                            capture_output=True, text=True, timeout=180)
    log = (folder / "main.log").read_text(encoding="latin-1") if (folder / "main.log").exists() else ""
    assert result.returncode == 0, result.stdout[-3000:]
    assert (folder / "main.pdf").is_file()
    return log


def overfull(log: str) -> list[float]:
    return [float(points) for points in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)]


NO_PDFLATEX = "pdflatex not on PATH (Debian: texlive-latex-base texlive-latex-recommended texlive-fonts-recommended)"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason=NO_PDFLATEX)
def test_tables_tex_compiles_whole_in_a_two_column_paper(rendered, tmp_path):
    out, _ = rendered
    log = compile_tex(out / "tables.tex", tmp_path)
    assert not [p for p in overfull(log) if p > 1.0], "a table is wider than its column or page"
    assert "Too many unprocessed floats" not in log


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason=NO_PDFLATEX)
def test_a_big_report_compiles_too(tmp_path):
    """Ten graphs and the seed papers' methods: many floats, a wide overview."""
    rows = []
    for number in range(5):
        for row in sweep_rows(seed=number, reps=2, warmup=False):
            row = dict(row, graph=row["graph"] + ("" if number == 0 else f"-{number}"))
            rows.append(row)
            if row["method"] == "opt":
                for name in ("vbf", "vbf-stride", "vbf-flag", "harish", "dijkstra"):
                    rows.append(dict(row, method=name, run_id=f"{row['run_id']}-{name}"))
    path = write_rows(tmp_path / "big.jsonl", rows)
    render_all(load_results([path]), [path], tmp_path / "out", formats=("tex",))
    folder = tmp_path / "tex"
    folder.mkdir()
    log = compile_tex(tmp_path / "out" / "tables.tex", folder)
    assert not [p for p in overfull(log) if p > 1.0]


def test_degenerate_results_still_render(tmp_path, frame):
    """A single ok run, and a graph where nothing ran correctly: no crash, failures stay words."""
    one = frame.iloc[[1]].copy()
    assert len(render_all(one, [FIXTURE], tmp_path / "one", formats=("html", "tex"))) == 2
    broken = frame[frame.graph == P2P].copy()
    broken["status"] = "timeout"
    written = render_all(broken, [FIXTURE], tmp_path / "broken", formats=("md", "html"))
    md = (tmp_path / "broken" / "report.md").read_text(encoding="utf-8")
    assert "✗ timeout" in md and not any(p.suffix == ".png" for p in written)
    assert "no method ran correctly" in md


# ---- the command ----------------------------------------------------------------------------

def test_no_results_returns_1_with_one_clear_line(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert report_command.run([empty], tmp_path / "out") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no sweep results in" in err[0] and "python -m grader sweep" in err[0]
    assert not (tmp_path / "out").exists()
    monkeypatch.setattr(report_command, "default_results", lambda: [])
    assert report_command.run(None, tmp_path / "out") == 1
    assert "no sweep results in" in capsys.readouterr().err


def test_run_prints_paths_written(tmp_path, capsys):
    assert report_command.run([FIXTURE], tmp_path, formats=("html",)) == 0
    assert capsys.readouterr().out.strip().splitlines() == [str(tmp_path / "report.html")]
    assert report_command.run([FIXTURE], tmp_path, formats=("pdf",)) == 2


def test_cli_renders_the_fixture(tmp_path):
    result = subprocess.run([sys.executable, "-m", "grader", "report", "--results", str(FIXTURE), "--out",
                             str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    for name in ("report.md", "report.html", "tables.tex"):
        assert (tmp_path / name).is_file()
        assert str(tmp_path / name) in result.stdout


def test_check_against_a_rerun(tmp_path, capsys):
    first = write_rows(tmp_path / "a.jsonl", sweep_rows(seed=1))
    second = write_rows(tmp_path / "b.jsonl", sweep_rows(seed=2))
    assert report_command.check_rerun([first], [second]) == 0
    assert "0 contradicted" in capsys.readouterr().out
    rows = sweep_rows(seed=2)
    for row in rows:
        if row["method"] == "bmf" and row["sync"] == "incore":
            row["computation_ms"] *= 4
    third = write_rows(tmp_path / "c.jsonl", rows)
    assert report_command.check_rerun([first], [third]) == 1
    assert "contradicted: ('roadNet-CA~synth', 'sync', 'bmf'" in capsys.readouterr().out
    assert report_command.check_rerun([first], [tmp_path / "none.jsonl"]) == 2
