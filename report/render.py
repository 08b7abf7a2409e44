"""Render tables, plots and observations into report.md, report.html and tables.tex.

Why one model for three templates: the Markdown, the self-contained HTML and
the LaTeX tables for the USENIX paper must show the same numbers and marks.
Every file is written to a temporary name and renamed, so a reader never sees
half a report.
"""
from __future__ import annotations

import base64
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from sssp_common.files import atomic_writer
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from .catalogue import GraphInfo, describe_all, load_catalogue
from .cells import MISSING, format_number, format_times
from .load import CPU_DEVICE, describe_programs, device_text, measured, programs
from .observations import Observation, observe
from .papers import papers_table
from .plots import Plot, all_plots
from .skipped import skipped_lines
from .latex import latex_cell, latex_column_spec, latex_escape, latex_group_rules, latex_layout
from .tables import (Table, failures_table, graph_tables, graphs, graphs_table, outliers_table, overview_tables,
                     slug, status_table)

TEMPLATES = Path(__file__).parent / "templates"
FORMATS = {"md": "report.md", "html": "report.html", "tex": "tables.tex"}


def write_atomic(path: Path, data: bytes | str) -> Path:
    """Write whole or not at all (sssp_common's one atomic writer), making the folder first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path, "wb") as out:
        out.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


@dataclass
class GraphSection:
    graph: str
    info: GraphInfo
    tables: list[Table]
    plots: list[Plot]
    observations: list[Observation]

    @property
    def id(self) -> str:
        return f"graph-{slug(self.graph)}"

    @property
    def observation_groups(self) -> list[tuple[str, list[Observation]]]:
        """Observations by question, in the spec's order."""
        groups: dict[str, list[Observation]] = {}
        for observation in self.observations:
            groups.setdefault(observation.topic_title, []).append(observation)
        return list(groups.items())


@dataclass
class ReportModel:
    """Everything the templates show."""
    provenance: dict
    summary: list[str]
    overview: list[Table]
    graphs: Table
    papers: Table | None
    sections: list[GraphSection]
    status: Table
    failures: Table
    outliers: Table
    legend: list[tuple[str, str]] = field(default_factory=list)
    contexts: dict[str, str] = field(default_factory=dict)   # graph ("" for all) → device and graph status

    def context(self, table: Table) -> str:
        """What a pasted table's caption must add: the device, the graph(s) and what they are."""
        return self.contexts.get(table.graph, self.contexts.get("", ""))


def _distinct(frame: pd.DataFrame, column: str) -> list[str]:
    return [v for v in dict.fromkeys(frame[column]) if v]


def repetitions_text(frame: pd.DataFrame) -> str:
    """'3 per setting' or '1–3 per setting' (distinct reps >= 0 of each setting)."""
    keys = ["graph", "variant", "ordering", "config"]
    if not len(frame):
        return "none"
    counts = frame.groupby(keys, sort=False)["rep"].nunique()
    low, high = int(counts.min()), int(counts.max())
    return f"{low} per setting" if low == high else f"{low}–{high} per setting"


def provenance(all_rows: pd.DataFrame, frame: pd.DataFrame, sources: list[Path]) -> dict:
    """When, where and on what the results came from; `frame` is measured runs, `all_rows` adds warm-ups."""
    started = sorted(s for s in all_rows["started_at"] if s)
    devices = _distinct(frame, "device")
    cpu = [d for d in devices if d == CPU_DEVICE]
    gpu = [d for d in devices if d != CPU_DEVICE]
    if gpu and cpu:
        kind, title = "mixed: GPU and the CPU fallback", "SSSP sweep report: GPU and CPU-fallback runs"
    elif cpu:
        kind, title = "CPU fallback (numpy), no GPU", "SSSP sweep report: CPU fallback (numpy), not a GPU"
    elif gpu:
        kind, title = "GPU", f"SSSP on the GPU ({', '.join(gpu)}): sweep report"
    else:
        kind, title = "unknown (no run printed its device)", "SSSP sweep report"
    programs = _distinct(frame, "program")
    ids = [i for i in _distinct(frame, "program_id") if i not in programs]
    return {
        "title": title,
        "device_kind": kind,
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "sources": [str(p) for p in sources],
        "machines": _distinct(frame, "machine"),
        "devices": devices or ["(none printed)"],
        "commits": _distinct(frame, "commit") or ["(unknown)"],
        "sweeps": _distinct(frame, "sweep"),
        "program": ", ".join(programs) or "(unnamed)",
        "program_ids": ids,
        "runs": len(frame),
        "warmups": int(all_rows["warmup"].sum()) if len(all_rows) else 0,
        "repetitions": repetitions_text(frame),
        "first_run": started[0] if started else "",
        "last_run": started[-1] if started else "",
        "graphs": graphs(frame),
    }


LEGEND = [
    ("305.7 [300.0–310.0]", "median over the repetitions that were ok, in ms, [min–max] when they differ"),
    ("305.7 [300.0–310.0] †", "† a repetition was an outlier (over 3 MADs from the median): left out of the "
                              "median and range, but a comparison must clear it too"),
    ("✗ wrong (12)", "no repetition was ok: the status word (mismatching vertices for wrong), never a time"),
    ("305.7 ⚠ timeout 1/3", "some repetitions failed: median of the ok ones, marked; left out of observations"),
    (MISSING, "not run"),
]


def headline(frame: pd.DataFrame) -> list[str]:
    """One line per graph: the fastest method's best total time and its speed-up over bmf out-of-core."""
    from .compare import TOO_FEW, compare
    from .tables import BASELINE, best_clean, variant_name, variants, with_total
    totals = with_total(frame)
    lines = []
    for graph in graphs(frame):
        best = [(v, b) for v in variants(frame) if (b := best_clean(totals, graph, v, "total_ms")) is not None]
        if not best:
            lines.append(f"{graph}: no method ran correctly.")
            continue
        variant, (ordering, config, cell) = min(best, key=lambda item: item[1][2].median)
        text = f"{graph}: fastest {variant_name(variant)}, {format_number(cell.median)} ms ({config}, {ordering})"
        base = dict(best).get(BASELINE)
        if base is not None and variant != BASELINE:
            verdict = compare(cell, base[2])
            ratio = base[2].median / cell.median
            base_ms = f"{format_number(base[2].median)} ms"
            if verdict.called:
                text += f", {format_times(ratio)} faster than bmf out-of-core ({base_ms})"
            elif verdict.kind == TOO_FEW:
                text += f"; bmf out-of-core {base_ms} ({format_times(ratio)}; too few repetitions to tell from noise)"
            else:
                text += f", within noise of bmf out-of-core ({base_ms})"
        lines.append(text + ".")
    return lines


def summary_lines(frame: pd.DataFrame, prov: dict, skipped: list[str] = ()) -> list[str]:
    """What ran, what failed, what has no result and why (``skipped``, report.skipped), the
    headline numbers: the first thing a reader sees."""
    settings = frame.groupby(["graph", "variant", "ordering", "config"], sort=False).ngroups if len(frame) else 0
    lines = [f"Ran {prov['runs']:,} measured runs ({settings:,} settings on {len(prov['graphs'])} graph(s), "
             f"repetitions: {prov['repetitions']}; {prov['warmups']} warm-up run(s) not used) of program "
             f"{prov['program']} on {prov['device_kind']}: {', '.join(prov['devices'])}."]
    bad = frame[frame["status"] != "ok"]
    if len(bad):
        statuses = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in bad["status"].value_counts().items())
        where = ", ".join(f"{g} ({n})" for g, n in bad["graph"].value_counts().items())
        lines.append(f"Failed: {len(bad)} run(s) ({statuses}) on {where}; see Failures. Their settings are "
                     "left out of every comparison.")
    else:
        lines.append("Every run was correct (every distance matched the reference).")
    return lines + list(skipped) + headline(frame)


def caption_contexts(frame: pd.DataFrame, infos: dict[str, GraphInfo]) -> dict[str, str]:
    """graph → 'Device: ...; graph X (what it is).', and '' → the same naming every graph."""
    from .tables import select
    out = {graph: f"Device: {device_text(select(frame, graph=graph))}; graph {info.context_text}."
           for graph, info in infos.items()}
    names = "; ".join(info.context_text for info in infos.values()) or "none"
    out[""] = f"Device: {device_text(frame)}; graphs: {names}."
    return out


def figure_footers(frame: pd.DataFrame, infos: dict[str, GraphInfo]) -> dict[str, str]:
    """graph → what every figure of it says under it: the device its runs printed and what the
    graph is (a stand-in with its scale), so a figure pasted alone is never a CPU run taken for a
    GPU one, nor a stand-in for the real graph."""
    from .tables import select
    return {graph: f"Device: {device_text(select(frame, graph=graph))}; graph {info.context_text}"
            for graph, info in infos.items()}


def build_model(all_rows: pd.DataFrame, sources: list[Path], catalogue: dict | None = None,
                plots: bool = True) -> ReportModel:
    """The model of one program's report; refuses rows of several programs (never merged)."""
    if len(all_rows) and all_rows["program_key"].nunique() > 1:
        raise ValueError("these results hold several programs: "
                         + describe_programs(programs(all_rows)) + "; choose one with --program")
    frame = measured(all_rows).reset_index(drop=True)
    catalogue = load_catalogue() if catalogue is None else catalogue
    infos = describe_all(frame, catalogue)
    plots = all_plots(frame, figure_footers(frame, infos)) if plots else []
    notes = observe(frame)
    sections = [GraphSection(graph, infos[graph], graph_tables(frame, graph), [p for p in plots if p.graph == graph],
                             [o for o in notes if o.graph == graph]) for graph in graphs(frame)]
    prov = provenance(all_rows, frame, sources)
    program_key = str(all_rows["program_key"].iloc[0]) if len(all_rows) else ""
    summary = summary_lines(frame, prov, skipped_lines(frame, list(sources), program_key))
    return ReportModel(prov, summary, overview_tables(frame), graphs_table(infos),
                       papers_table(frame), sections, status_table(frame), failures_table(frame),
                       outliers_table(frame), LEGEND, caption_contexts(frame, infos))


# ---- format-specific cell text -------------------------------------------------------------

def markdown_text(text: str) -> str:
    """Keep a table cell on one line and its pipes from splitting columns."""
    return str(text).replace("|", "\\|").replace("\n", " ")


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
                       datauri=data_uri, colspec=latex_column_spec, grouprules=latex_group_rules,
                       texlayout=latex_layout)
    return env


def render_text(model: ReportModel, kind: str, figures_dir: str = "figures") -> str:
    template = environment(kind).get_template(f"{FORMATS[kind]}.j2")
    return template.render(model=model, figures_dir=figures_dir)


def render_all(frame: pd.DataFrame, sources: list[Path], out_dir: Path,
               formats=("md", "html", "tex")) -> list[Path]:
    """Write the asked-for formats of ONE program's report into out_dir (Markdown also writes
    its PNGs to out_dir/figures); a frame of several programs is refused (ValueError)."""
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise ValueError(f"unknown report format(s): {', '.join(sorted(unknown))}; known: {', '.join(FORMATS)}")
    model = build_model(frame, sources, plots=bool({"md", "html"} & set(formats)))   # tables.tex has no plots
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


def program_folders(frame: pd.DataFrame) -> dict[str, str]:
    """program identity → a folder name: its label, with the identity's start when labels repeat."""
    present = programs(frame)
    slugs = Counter((slug(label) or "program")[:80] for _, label, _ in present)   # a folder name: short
    names = {}
    for key, label, _ in present:
        name = (slug(label) or "program")[:80]
        if slugs[name] > 1:
            name += "-" + slug(key)[:12]
        names[key] = name
    return names


def render_reports(frame: pd.DataFrame, sources: list[Path], out_dir: Path, formats=("md", "html", "tex"),
                   program: str | None = None, write=None) -> list[Path]:
    """One report per program: the chosen one into out_dir, or (several present, none chosen)
    each into out_dir/<program>/. Raises load.ProgramChoiceError for a --program that matches none.
    ``write``: what writes one program's files (default render_all, the full report; the paper
    set passes report.paperset_render.render_paper)."""
    from .load import select_program
    write = write or render_all
    if program:
        return write(select_program(frame, program), sources, out_dir, formats)
    keys = frame["program_key"].unique() if len(frame) else []
    if len(keys) <= 1:
        return write(frame, sources, out_dir, formats)
    written = []
    for key, folder in program_folders(frame).items():
        written += write(frame[frame["program_key"] == key], sources, Path(out_dir) / folder, formats)
    return written
