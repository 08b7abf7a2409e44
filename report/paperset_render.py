"""Write the paper set (report.paperset) as paper.md, paper.html and paper.tex + paper-body.tex.

Why two LaTeX files: paper-body.tex is the sections, exhibits and sentences to \\input into
the student's USENIX paper; paper.tex wraps it in a two-column 10pt letter page of the
USENIX template's shape (usenix-2020-09.sty is not in TeX Live, so its page geometry is
restated in the preamble), which the tests compile and count (six pages at most). The
figures are written as PNGs beside them (figures/paper-*.png) for md and tex; html embeds them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .catalogue import describe_all, load_catalogue
from .load import describe_programs, device_text, measured, programs
from .observations import observe
from .paperset import PaperItem, paper_items
from .paperset_plots import FIGURES
from .render import environment, provenance, summary_lines, write_atomic
from .skipped import skipped_lines

PAPER_FILES = {"md": "paper.md", "html": "paper.html", "tex": "paper.tex"}
BODY_TEX = "paper-body.tex"
PROJECT_LABEL = "project"   # the sweep's label for this checkout's own ./sssp (grader.sweep.config)


@dataclass
class PaperModel:
    """Everything the paper templates show."""
    provenance: dict
    summary: list[str]
    items: list[PaperItem]
    device: str
    graphs: list[str]        # 'roadNet-CA~synth (road-like stand-in for roadNet-CA at 1/256 of its edges)'

    @property
    def tables(self) -> list[PaperItem]:
        return [item for item in self.items if item.kind == "table"]


def build_paper(all_rows: pd.DataFrame, sources: list[Path], catalogue: dict | None = None,
                plots: bool = True) -> PaperModel:
    """The paper set of ONE program's results (several are refused, as for the full report)."""
    if len(all_rows) and all_rows["program_key"].nunique() > 1:
        raise ValueError("these results hold several programs: "
                         + describe_programs(programs(all_rows)) + "; choose one with --program")
    frame = measured(all_rows).reset_index(drop=True)
    infos = describe_all(frame, load_catalogue() if catalogue is None else catalogue)
    prov = provenance(all_rows, frame, sources)
    device = device_text(frame)
    graph_names = [info.context_text for info in infos.values()]
    context = f"on {device}; graphs: {'; '.join(graph_names) or 'none'}"
    items = paper_items(frame, observe(frame), context, prov["repetitions"],
                        prov["program"] == PROJECT_LABEL)
    footer = f"Device: {device}. Graphs: {'; '.join(graph_names) or 'none'}."
    for item in items:
        if item.kind == "figure" and plots:
            item.plot = FIGURES[item.key](frame, item.caption, footer)
    program_key = str(all_rows["program_key"].iloc[0]) if len(all_rows) else ""
    summary = summary_lines(frame, prov, skipped_lines(frame, list(sources), program_key))
    return PaperModel(prov, summary, items, device, graph_names)


def render_paper_text(model: PaperModel, kind: str, figures_dir: str = "figures", standalone: bool = True) -> str:
    name = "paper.tex.j2" if kind == "tex" else f"{PAPER_FILES[kind]}.j2"
    return environment(kind).get_template(name).render(model=model, figures_dir=figures_dir, standalone=standalone,
                                                       body=BODY_TEX)


def render_paper(frame: pd.DataFrame, sources: list[Path], out_dir: Path, formats=("md", "html", "tex"),
                 catalogue: dict | None = None) -> list[Path]:
    """Write the asked-for formats of ONE program's paper set into out_dir."""
    unknown = set(formats) - set(PAPER_FILES)
    if unknown:
        raise ValueError(f"unknown report format(s): {', '.join(sorted(unknown))}; known: {', '.join(PAPER_FILES)}")
    model = build_paper(frame, sources, catalogue, plots=True)
    out_dir = Path(out_dir)
    written = []
    if {"md", "tex"} & set(formats):
        for item in model.items:
            if item.plot is not None:
                written.append(write_atomic(out_dir / "figures" / item.plot.filename, item.plot.png))
    for kind in ("md", "html"):
        if kind in formats:
            written.append(write_atomic(out_dir / PAPER_FILES[kind], render_paper_text(model, kind)))
    if "tex" in formats:
        written.append(write_atomic(out_dir / BODY_TEX, render_paper_text(model, "tex", standalone=False)))
        written.append(write_atomic(out_dir / PAPER_FILES["tex"], render_paper_text(model, "tex")))
    return written
