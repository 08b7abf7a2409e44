"""Render tables, plots and observations into report.md, report.html and tables.tex.

Why one model for three templates: the Markdown, the self-contained HTML and
the LaTeX tables for the USENIX paper must show the same numbers and marks.
Every file is written to a temporary name and renamed, so a reader never sees
half a report.
"""
from __future__ import annotations

import base64
import os
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from .cells import MISSING, TextCell
from .observations import Observation, observe
from .plots import Plot, all_plots
from .tables import Table, failures_table, graph_tables, graphs, overview_table, select, slug, status_table

TEMPLATES = Path(__file__).parent / "templates"
FORMATS = {"md": "report.md", "html": "report.html", "tex": "tables.tex"}


def write_atomic(path: Path, data: bytes | str) -> Path:
    """Write to a temporary file beside `path`, then rename it over `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
        os.chmod(temporary, 0o644)  # mkstemp makes 0600; a report is for reading
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


@dataclass
class GraphSection:
    graph: str
    vertices: int | None
    edges: int | None
    tables: list[Table]
    plots: list[Plot]
    observations: list[Observation]

    @property
    def id(self) -> str:
        return f"graph-{slug(self.graph)}"

    @property
    def observation_groups(self) -> list[tuple[str, list[Observation]]]:
        """Observations by topic, topics in the order they were generated."""
        groups: dict[str, list[Observation]] = {}
        for observation in self.observations:
            groups.setdefault(observation.topic_title, []).append(observation)
        return list(groups.items())


@dataclass
class ReportModel:
    """Everything the templates show."""
    provenance: dict
    overview: Table
    sections: list[GraphSection]
    status: Table
    failures: Table
    legend: list[tuple[str, str]] = field(default_factory=list)


def _distinct(frame: pd.DataFrame, column: str) -> list[str]:
    return [v for v in dict.fromkeys(frame[column]) if v]


def provenance(frame: pd.DataFrame, sources: list[Path]) -> dict:
    """When and where the results came from."""
    started = sorted(s for s in frame["started_at"] if s)
    counts = Counter(frame["status"])
    order = ["ok", "wrong", "timeout", "crash", "malformed", "no_output"]
    return {
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "sources": [str(p) for p in sources],
        "machines": _distinct(frame, "machine"),
        "devices": _distinct(frame, "device"),
        "commits": _distinct(frame, "commit"),
        "sweeps": _distinct(frame, "sweep"),
        "programs": _distinct(frame, "program"),
        "runs": len(frame),
        "status_counts": [(s.replace("_", " "), counts[s]) for s in order if counts.get(s)]
                         + [(s, n) for s, n in sorted(counts.items()) if s not in order],
        "first_run": started[0] if started else "",
        "last_run": started[-1] if started else "",
        "graphs": graphs(frame),
    }


LEGEND = [
    ("305.7 [300.0–310.0]", "median over the repetitions that were ok, in ms, [min–max] when there are several"),
    ("✗ wrong (12)", "no repetition was ok: the status word (mismatching vertices for wrong), never a time"),
    ("305.7 ⚠ timeout 1/3", "some repetitions failed: median of the ok ones, marked; left out of observations"),
    (MISSING, "not run"),
]


def build_model(frame: pd.DataFrame, sources: list[Path]) -> ReportModel:
    plots = all_plots(frame)
    notes = observe(frame)
    sections = []
    for graph in graphs(frame):
        runs = select(frame, graph=graph)
        vertices = runs["graph_vertices"].dropna()
        edges = runs["graph_edges"].dropna()
        sections.append(GraphSection(graph, int(vertices.iloc[0]) if len(vertices) else None,
                                     int(edges.iloc[0]) if len(edges) else None, graph_tables(frame, graph),
                                     [p for p in plots if p.graph == graph],
                                     [o for o in notes if o.graph == graph]))
    return ReportModel(provenance(frame, sources), overview_table(frame), sections, status_table(frame),
                       failures_table(frame), LEGEND)


# ---- format-specific cell text -------------------------------------------------------------

def markdown_text(text: str) -> str:
    """Keep a table cell on one line and its pipes from splitting columns."""
    return str(text).replace("|", "\\|").replace("\n", " ")


LATEX_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
                  "%": r"\%", "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "×": r"$\times$", "–": "--", "—": "---", "·": r"$\cdot$", "✗": "", "⚠": "",
                  "≥": r"$\geq$", "≤": r"$\leq$", "|": r"\textbar{}", "<": r"\textless{}", ">": r"\textgreater{}"}
LATEX_PATTERN = re.compile("|".join(re.escape(k) for k in LATEX_SPECIALS))


def latex_escape(text) -> str:
    """Escape LaTeX's special characters and the few Unicode signs the tables use."""
    return LATEX_PATTERN.sub(lambda m: LATEX_SPECIALS[m.group(0)], str(text)).strip()


def latex_cell(cell) -> str:
    """A cell as LaTeX: median with a small [min--max], failures in italics, missing as an en dash."""
    if isinstance(cell, TextCell):
        return "--" if cell.text == MISSING else latex_escape(cell.text)
    state = cell.state
    if state == "missing":
        return "--"
    if state == "failed":
        return r"\textit{" + latex_escape(cell.failure_text) + "}"
    text = latex_escape(cell.value_text)
    if cell.spread_text:
        text += r"\,{\scriptsize[" + latex_escape(cell.spread_text) + "]}"
    if state == "mixed":
        text += r" {\scriptsize\textit{(" + latex_escape(cell.failure_text) + ")}}"
    return text


def latex_column_spec(table: Table) -> str:
    return "l" + "r" * len(table.columns)


def latex_group_rules(table: Table) -> str:
    """\\cmidrule under each column group."""
    rules, start = [], 2
    for _, span in table.column_groups:
        rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
        start += span
    return "".join(rules)


def cell_class(cell) -> str:
    """CSS class: ok / mixed / failed / missing for measurements, label or number for the rest."""
    return "missing" if cell.text == MISSING else getattr(cell, "state", "label")


def data_uri(plot: Plot) -> str:
    return "data:image/png;base64," + base64.b64encode(plot.png).decode("ascii")


def environment(kind: str) -> Environment:
    """HTML autoescapes; LaTeX uses ((( ))) / ((* *)) delimiters so TeX braces never clash with Jinja's."""
    options = dict(loader=FileSystemLoader(str(TEMPLATES)), undefined=StrictUndefined, trim_blocks=True,
                   lstrip_blocks=True, keep_trailing_newline=True)
    if kind == "tex":
        options.update(block_start_string="((*", block_end_string="*))", variable_start_string="(((",
                       variable_end_string=")))", comment_start_string="((=", comment_end_string="=))")
    env = Environment(autoescape=select_autoescape(enabled_extensions=("html.j2",), default=False), **options)
    env.filters.update(md=markdown_text, tex=latex_escape, texcell=latex_cell, cellclass=cell_class,
                       datauri=data_uri, colspec=latex_column_spec, grouprules=latex_group_rules)
    return env


def render_text(model: ReportModel, kind: str, figures_dir: str = "figures") -> str:
    template = environment(kind).get_template(f"{FORMATS[kind]}.j2")
    return template.render(model=model, figures_dir=figures_dir)


def render_all(frame: pd.DataFrame, sources: list[Path], out_dir: Path,
               formats=("md", "html", "tex")) -> list[Path]:
    """Write the asked-for formats into out_dir (Markdown also writes its PNGs to out_dir/figures)."""
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise ValueError(f"unknown report format(s): {', '.join(sorted(unknown))}; known: {', '.join(FORMATS)}")
    model = build_model(frame, sources)
    out_dir = Path(out_dir)
    written = []
    if "md" in formats:
        for section in model.sections:
            for plot in section.plots:
                written.append(write_atomic(out_dir / "figures" / plot.filename, plot.png))
    for kind in ("md", "html", "tex"):
        if kind in formats:
            written.append(write_atomic(out_dir / FORMATS[kind], render_text(model, kind)))
    return written
