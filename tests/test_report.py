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

from grader.commands import report as report_command  # noqa: E402
from report.cells import summarize  # noqa: E402
from report.load import load_results  # noqa: E402
from sssp_common.record import read_rows  # noqa: E402
from report.observations import observe  # noqa: E402
from report.plots import all_plots  # noqa: E402
from report.render import latex_escape, render_all  # noqa: E402
from report.tables import bmf_table, opt_table, segscan_table, summary_table, tpe_table  # noqa: E402

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


# ---- tables ---------------------------------------------------------------------------------

def test_median_and_spread_of_a_hand_checked_cell(frame):
    # reps 300.0, 310.0, 305.7 → median 305.7, min–max 300.0–310.0
    cell = bmf_table(frame, ROAD).grouped_cell("512×4", "out-of-core", "source")
    assert cell.median == pytest.approx(305.7) and (cell.low, cell.high) == (300.0, 310.0)
    assert cell.n_runs == cell.n_ok == 3
    assert cell.text == "305.7 [300.0–310.0]"


def test_failed_cells_show_their_status_not_a_time(frame):
    bmf = bmf_table(frame, ROAD)
    wrong = bmf.grouped_cell("384×5", "in-core", "given")
    assert wrong.state == "failed" and wrong.text == "✗ wrong (12)"
    timeout = bmf.grouped_cell("1024×2", "in-core", "destination")
    assert timeout.text == "✗ timeout"
    malformed = segscan_table(frame, P2P).cell("256×8", "destination")
    assert malformed.text == "✗ malformed"
    for cell in (wrong, timeout, malformed):
        assert not re.search(r"\d+\.\d", cell.text)


def test_partly_failed_cells_are_marked(frame):
    tpe = tpe_table(frame, P2P)
    crashed = tpe.grouped_cell("768×2", "in-core", "computation")
    assert crashed.state == "mixed" and "⚠" in crashed.text and "crash 1/2" in crashed.text
    no_output = bmf_table(frame, P2P).grouped_cell("384×5", "out-of-core", "given")
    assert no_output.state == "mixed" and "no output 1/3" in no_output.text


def test_missing_method_is_shown_as_missing(frame):
    table = opt_table(frame, P2P)
    assert all(cell.text == "—" for _, cells in table.rows for cell in cells)
    assert any("not run" in note for note in table.notes)
    summary = dict(summary_table(frame, P2P).rows)
    assert summary["opt outcore"][-1].text == "not run"
    assert opt_table(frame, ROAD).cell("512×4", "source").clean


def test_tpe_table_has_computation_filtering_and_total(frame):
    table = tpe_table(frame, ROAD)
    assert [g for g, _ in table.column_groups] == ["out-of-core", "in-core"]
    comp = table.grouped_cell("512×4", "out-of-core", "computation").median
    filt = table.grouped_cell("512×4", "out-of-core", "filtering").median
    total = table.grouped_cell("512×4", "out-of-core", "total").median
    assert comp < total and filt < total


def test_summarize_empty_is_missing():
    assert summarize(None, "computation_ms").text == "—"


# ---- observations ---------------------------------------------------------------------------

def test_observation_carries_the_right_figures(frame):
    texts = [o.text for o in observe(frame)]
    assert ("On roadNet-CA~synth, bmf out-of-core with edges sorted by source is fastest at 512×4 (305.7 ms), "
            "1.42× faster than the slowest configuration 768×2 (434.1 ms).") in texts


def test_observations_claim_nothing_about_failed_cells(frame):
    observations = observe(frame)
    texts = [o.text for o in observations]
    assert not any(WRONG_TIME in t for t in texts)
    gated = ("not compared", "left out", "cannot")
    for o in observations:
        if "in-core with edges as given" in o.text and o.graph == ROAD and "384×5" in o.text:
            assert any(word in o.text for word in gated), o.text
    in_core_given = next(t for t in texts if t.startswith(f"On {ROAD}, bmf in-core with edges as given is fastest"))
    assert "(not compared: 384×5 wrong (12))" in in_core_given
    assert any(t == f"On {P2P}, opt was not run, so its speed-up over bmf cannot be given." for t in texts)
    failures = [o.text for o in observations if o.topic == "failures"]
    assert len(failures) == 5 and all("left out of every comparison" in t for t in failures)


# ---- plots ----------------------------------------------------------------------------------

def test_plots_are_png_with_captions(frame):
    plots = all_plots(frame)
    kinds = {p.id.split("-")[0] for p in plots}
    assert kinds == {"configs", "tpe", "speedup", "ordering"}
    assert len(plots) == 8 and all(p.png.startswith(PNG_MAGIC) for p in plots)
    speedup = next(p for p in plots if p.id == "speedup-p2p-gnutella04")
    assert "opt outcore: not run" in speedup.caption


# ---- rendered files -------------------------------------------------------------------------

class HtmlInventory(HTMLParser):
    """Tables (id, caption text), images (src) and every URL-bearing attribute of a page."""

    def __init__(self):
        super().__init__()
        self.tables, self.images, self.urls, self.tags = {}, [], [], []
        self._caption_of = None
        self.cells: dict[str, list[tuple[str, str]]] = {}
        self._table = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        for key in ("src", "href", "srcset", "data", "action"):
            if key in attrs:
                self.urls.append((tag, key, attrs[key]))
        if tag == "table":
            self._table = attrs.get("id", "")
            self.tables[self._table] = ""
            self.cells[self._table] = []
        elif tag == "caption":
            self._caption_of = self._table
        elif tag == "img":
            self.images.append(attrs.get("src", ""))
        elif tag == "td":
            self._cell = [attrs.get("class", ""), ""]

    def handle_endtag(self, tag):
        if tag == "caption":
            self._caption_of = None
        elif tag == "td" and self._cell is not None:
            self.cells[self._table].append(tuple(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._caption_of is not None:
            self.tables[self._caption_of] += data
        if self._cell is not None:
            self._cell[1] += data


def expected_table_ids():
    ids = ["overview", "status", "failures", "provenance"]
    for graph in ("roadnet-ca-synth", "p2p-gnutella04"):
        ids += [f"{kind}-{graph}" for kind in ("summary", "bmf", "segscan", "tpe", "opt", "work")]
    return ids


def test_writes_three_formats_and_figures(rendered):
    out, written = rendered
    names = {p.relative_to(out).as_posix() for p in written}
    assert {"report.md", "report.html", "tables.tex"} <= names
    assert len([n for n in names if n.startswith("figures/") and n.endswith(".png")]) == 8
    assert not list(out.rglob("*.tmp"))


def test_html_is_self_contained_with_every_table_and_image(rendered):
    out, _ = rendered
    page = HtmlInventory()
    html = (out / "report.html").read_text(encoding="utf-8")
    page.feed(html)
    for table_id in expected_table_ids():
        assert table_id in page.tables, table_id
        assert page.tables[table_id].strip(), f"{table_id} has no caption"
    assert len(page.images) == 8
    for src in page.images:
        header, _, payload = src.partition(",")
        assert header in ("data:image/png;base64", "data:image/svg+xml;base64")
        data = base64.b64decode(payload, validate=True)
        assert data.startswith(PNG_MAGIC) or data.lstrip().startswith(b"<")
    for tag, key, url in page.urls:
        assert url.startswith(("data:", "#")), f"external reference <{tag} {key}={url!r}>"
    assert "link" not in page.tags and "script" not in page.tags
    assert not re.search(r"url\(\s*['\"]?(?!data:)", html) and "@import" not in html


def test_html_failed_cells_show_words_and_missing_method(rendered):
    out, _ = rendered
    page = HtmlInventory()
    page.feed((out / "report.html").read_text(encoding="utf-8"))
    bmf_road = page.cells["bmf-roadnet-ca-synth"]
    failed = [text for cls, text in bmf_road if cls == "failed"]
    assert sorted(failed) == ["✗ timeout", "✗ wrong (12)"]
    assert ("ok", "305.7 [300.0–310.0]") in bmf_road
    assert [text for cls, text in page.cells["segscan-p2p-gnutella04"] if cls == "failed"] == ["✗ malformed"]
    opt_p2p = page.cells["opt-p2p-gnutella04"]
    assert opt_p2p and all(cls == "missing" and text == "—" for cls, text in opt_p2p)
    for name in ("report.html", "report.md", "tables.tex"):
        assert WRONG_TIME not in (out / name).read_text(encoding="utf-8"), name


def test_html_header_says_where_results_came_from(rendered):
    out, _ = rendered
    html = (out / "report.html").read_text(encoding="utf-8")
    for fact in ("NVIDIA H100 80GB HBM3", "gpu-node-07", "01ede76", "225</strong> runs", "2 wrong", "2 timeout",
                 "1 crash", "2 malformed", "1 no output"):
        assert fact in html, fact


def test_markdown_tables_and_images(rendered):
    out, _ = rendered
    md = (out / "report.md").read_text(encoding="utf-8")
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md):
        assert (out / image).is_file(), image
    assert "| 512×4 | 381.9 [377.7–385.2] | 305.7 [300.0–310.0] |" in md
    assert "✗ wrong (12)" in md and "✗ timeout" in md
    table_lines = [line for line in md.splitlines() if line.startswith("| block size × count |")]
    assert len(table_lines) == 8  # bmf, segscan, tpe, opt per graph
    for header in table_lines:
        assert header.count("|") > 2


def strip_escaped(tex: str) -> str:
    """The TeX body without comments and without escaped specials (\\{ \\% ...), for counting."""
    lines = (re.sub(r"\\[{}%$&#_]", "", line).split("%", 1)[0] for line in tex.splitlines())
    return "\n".join(lines)


def test_tables_tex_is_booktabs_and_balanced(rendered):
    out, _ = rendered
    tex = (out / "tables.tex").read_text(encoding="utf-8")
    assert tex.startswith("%") and "\\usepackage{booktabs}" in tex.splitlines()[1]
    tables = tex.count("\\begin{table*}")
    assert tables == 14 and tex.count("\\end{table*}") == tables
    body = strip_escaped(tex)
    for command in ("\\toprule", "\\midrule", "\\bottomrule", "\\caption{", "\\label{tab:"):
        assert body.count(command) == tables, command
    depth = 0
    for char in body:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0
    environments = re.findall(r"\\(begin|end)\{(\w+\*?)\}", body)
    stack = []
    for kind, name in environments:
        if kind == "begin":
            stack.append(name)
        else:
            assert stack.pop() == name
    assert not stack
    assert tex.isascii(), "non-ASCII left unescaped"
    assert "roadNet-CA\\textasciitilde{}synth" in tex and "512$\\times$4" in tex
    assert "\\textit{wrong (12)}" in tex and "\\textit{timeout}" in tex
    assert re.search(r"(?<!\\)_", body) is None


def test_latex_escape():
    assert latex_escape("a_b 50% & #1 ~x {y} 3×4") == r"a\_b 50\% \& \#1 \textasciitilde{}x \{y\} 3$\times$4"


TEX_ENGINES = [e for e in ("pdflatex", "lualatex", "tectonic") if shutil.which(e)]


@pytest.mark.skipif(not TEX_ENGINES, reason="no TeX engine (pdflatex, lualatex, tectonic) on PATH")
def test_tables_tex_compiles(rendered, tmp_path):
    out, _ = rendered
    shutil.copy(out / "tables.tex", tmp_path / "tables.tex")
    (tmp_path / "main.tex").write_text("\\documentclass[letterpaper,twocolumn,10pt]{article}\n"
                                       "\\usepackage[margin=0.75in]{geometry}\n\\usepackage{booktabs}\n"
                                       "\\begin{document}\n\\input{tables.tex}\n\\end{document}\n")
    engine = TEX_ENGINES[0]
    command = [engine, "main.tex"] if engine == "tectonic" else [engine, "-interaction=nonstopmode",
                                                                  "-halt-on-error", "main.tex"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert (tmp_path / "main.pdf").is_file()


def test_degenerate_results_still_render(tmp_path, frame):
    """A single ok run, and a graph where nothing ran correctly: no crash, failures stay words."""
    one = frame.iloc[[1]].copy()
    assert len(render_all(one, [FIXTURE], tmp_path / "one", formats=("html", "tex"))) == 2
    broken = frame[frame.graph == P2P].copy()
    broken["status"] = "timeout"
    written = render_all(broken, [FIXTURE], tmp_path / "broken", formats=("md", "html"))
    md = (tmp_path / "broken" / "report.md").read_text(encoding="utf-8")
    assert "✗ timeout" in md and not any(p.suffix == ".png" for p in written)
    assert "cannot" in md


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
