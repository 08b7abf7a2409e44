"""The paper set: one numbered table or figure per question of the spec's "What to Report?".

Why a set of its own: the full report runs to many tables per graph; a student writing the
six-page USENIX paper needs exactly one exhibit per question, numbered as LaTeX will number
it, each with a one-line caption that survives being pasted alone: the device, the graphs
(a stand-in with its scale), the statistic and the repetitions. The questions, in the
spec's order: the five configurations × methods; edge orderings; in-core vs out-of-core;
segscan; tpe's computation vs filtering; opt with its intuition. Pure: frame in, items out
(the two figures are drawn by report.paperset_plots).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .cells import TextCell, format_number, format_times, summarize
from .compare import FASTER, TOO_FEW, compare
from .observations import Observation
from .tables import (BASELINE, ORDER_SHORT, SPEC_CONFIGS, VARIANTS, Table, best_clean, cell_grid, graphs,
                     on_cpu, orderings_of, select, variant_short, with_total, work_values)

PER_ITEM = 3   # generated sentences under an exhibit: the strongest, so six pages hold the set


@dataclass
class PaperItem:
    """One exhibit: a table or a figure (its Plot is filled in by paperset_plots)."""
    kind: str                 # 'table' or 'figure'
    number: int               # as LaTeX numbers it (tables and figures apart, in order)
    key: str                  # configurations, ordering, sync, segscan, filtering, opt
    question: str             # the spec's question it answers
    caption: str              # one line: what, statistic, repetitions, device, graphs
    table: Table | None = None
    plot: object = None       # report.plots.Plot
    sentences: list[str] = field(default_factory=list)
    intuition: str = ""

    @property
    def label(self) -> str:
        return f"{'Table' if self.kind == 'table' else 'Figure'} {self.number}"

    @property
    def tex_label(self) -> str:
        return f"{'tab' if self.kind == 'table' else 'fig'}:paper-{self.key}"


QUESTIONS = (
    ("configurations", "table", "Execution configuration: the five block size × block count configurations, "
                                "per method"),
    ("ordering", "figure", "Edge list organization: edges as given, sorted by source, sorted by destination"),
    ("sync", "table", "In-core vs out-of-core"),
    ("segscan", "table", "Using shared memory: segmented scan (segscan) on destination-sorted edges"),
    ("filtering", "figure", "Work-efficient tpe: computation stage vs filtering stage"),
    ("opt", "table", "Optimization (opt) and its intuition"),
)
TOPICS = {"configurations": ("configuration",), "ordering": ("ordering",), "sync": ("sync",),
          "segscan": ("segscan",), "filtering": ("filtering", "work"), "opt": ("opt",)}

# What this checkout's opt does and why it may help, with the small example the spec asks for.
# Shown only for this project's own program: a student's opt is theirs to explain.
PROJECT_OPT_INTUITION = (
    "opt keeps a worklist: a round relaxes only the out-edges of vertices whose distance improved in the round "
    "before (near-far piles: improved vertices below a distance threshold first, the rest set aside until the "
    "near pile runs dry). Example: on a chain 0→1→…→k, Bellman-Ford relaxes all k edges in each of k rounds "
    "(k² relaxations), while the worklist relaxes the one out-edge of the one vertex that improved: k relaxations "
    "in all. The threshold adds priority: a vertex first reached by a long path is rarely expanded before a "
    "shorter path reaches it, so fewer vertices are expanded twice.")
OTHER_OPT_INTUITION = ("[Your optimization: what it changes, why it might help, and a small example, as the spec "
                       "asks; the counts in this table are its evidence.]")


def ordering_for(frame: pd.DataFrame, graph: str, variant: str) -> str | None:
    """The ordering an exhibit shows a variant in: destination for segscan (the spec runs it
    only there), else source (the spec's order for tpe and in-core), else the first run."""
    present = orderings_of(frame, graph, variant)
    for wanted in (("destination",) if variant == "segscan" else ("source",)):
        if wanted in present:
            return wanted
    return present[0] if present else None


def grouped_rows(rows_by_graph: list[tuple[str, list[tuple[str, list]]]]) -> tuple[list, list[int]]:
    """Rows labelled by their graph on its first row only, and a rule before each new graph."""
    rows, breaks = [], []
    for graph, group in rows_by_graph:
        if not group:
            continue
        breaks.append(len(rows))
        for index, (setting, cells) in enumerate(group):
            rows.append((graph if index == 0 else "", [TextCell(setting)] + cells))
    return rows, breaks[1:]


def configurations_table(frame: pd.DataFrame) -> Table:
    """Q1: computation kernel time of every spec method at each of the five configurations."""
    per_graph = []
    for graph in graphs(frame):
        group = []
        for variant in [v for v in VARIANTS if len(select(frame, graph=graph, variant=v))]:
            ordering = ordering_for(frame, graph, variant)
            grid = cell_grid(frame, graph, variant, ordering, "computation_ms")
            stage = " · comp." if variant.startswith("tpe") else ""
            group.append((f"{variant_short(variant)} · {ORDER_SHORT.get(ordering, ordering)}{stage}",
                          [grid[config] for config in SPEC_CONFIGS]))
        per_graph.append((graph, group))
    rows, breaks = grouped_rows(per_graph)
    return Table(id="paper-configurations", title="Computation time per configuration", caption="", graph="",
                 row_header="graph", columns=["setting", *SPEC_CONFIGS], rows=rows, breaks=breaks)


def verdict_text(fast_name: str, slow_name: str, first, second) -> TextCell:
    """'in-core 2.22×' (the faster side and by how much), '≈ (1.02×, noise)' or '? (1 rep)'."""
    verdict = compare(first, second)
    ratio = verdict.ratio
    if verdict.kind == FASTER:
        return TextCell(f"{fast_name if verdict.first_wins else slow_name} {format_times(ratio)}", "number")
    if verdict.kind == TOO_FEW:
        return TextCell(f"? ({format_times(ratio)}, too few reps)", "number")
    return TextCell(f"≈ ({format_times(ratio)}, noise)", "number")


def sync_table(frame: pd.DataFrame) -> Table:
    """Q3: per method and ordering run in both syncs, the best configuration of each, with rounds."""
    per_graph = []
    for graph in graphs(frame):
        group = []
        methods = dict.fromkeys(v.split(" ")[0] for v in VARIANTS if " " in v)
        for method in methods:
            if on_cpu(frame, graph) and method == "opt":   # the numpy fallback runs opt alike for both syncs
                continue
            out_v, in_v = f"{method} outcore", f"{method} incore"
            for order in [o for o in orderings_of(frame, graph, out_v) if o in orderings_of(frame, graph, in_v)]:
                runs = select(frame, ordering=order)
                best_out, best_in = best_clean(runs, graph, out_v), best_clean(runs, graph, in_v)
                if best_out is None or best_in is None:
                    continue
                rounds = [summarize(select(frame, graph=graph, variant=v, ordering=order, config=best[1]),
                                    "rounds", "count") for v, best in ((out_v, best_out), (in_v, best_in))]
                group.append((f"{method} · {ORDER_SHORT.get(order, order)}", [
                    best_out[2], TextCell(best_out[1]), best_in[2], TextCell(best_in[1]),
                    verdict_text("in-core", "out-of-core", best_in[2], best_out[2]), *rounds]))
        per_graph.append((graph, group))
    rows, breaks = grouped_rows(per_graph)
    return Table(id="paper-sync", title="In-core vs out-of-core", caption="", graph="", row_header="graph",
                 columns=["setting", "out-of-core ms", "at", "in-core ms", "at", "faster", "rounds out",
                          "rounds in"], rows=rows, breaks=breaks)


def segscan_table(frame: pd.DataFrame) -> Table:
    """Q4: segscan against bmf out-of-core, both on destination-sorted edges at their best configuration."""
    rows = []
    for graph in graphs(frame):
        seg = best_clean(select(frame, ordering="destination"), graph, "segscan")
        base = best_clean(select(frame, ordering="destination"), graph, BASELINE)
        if not len(select(frame, graph=graph, variant="segscan")):
            rows.append((graph, [TextCell("not run", "missing")] + [TextCell("—")] * 4))
            continue
        if seg is None or base is None:
            why = "no correct segscan setting" if seg is None else "no correct bmf out-of-core setting"
            rows.append((graph, [TextCell(why, "failed")] + [TextCell("—")] * 4))
            continue
        rows.append((graph, [seg[2], TextCell(seg[1]), base[2], TextCell(base[1]),
                             verdict_text("segscan", "bmf", seg[2], base[2])]))
    return Table(id="paper-segscan", title="segscan vs bmf out-of-core", caption="", graph="", row_header="graph",
                 columns=["segscan ms", "at", "bmf out ms", "at", "faster"], rows=rows)


def opt_table(frame: pd.DataFrame) -> Table:
    """Q6: each opt variant's best total time against the best bmf out-of-core, with the counts
    that explain it (rounds, edges relaxed per graph edge)."""
    totals = work_values(with_total(frame))
    per_graph = []
    for graph in graphs(frame):
        base = best_clean(totals, graph, BASELINE, "total_ms")
        group = []
        for variant in [v for v in VARIANTS if v.startswith("opt") and len(select(frame, graph=graph, variant=v))]:
            if on_cpu(frame, graph) and variant == "opt incore":
                continue
            best = best_clean(totals, graph, variant, "total_ms")
            if best is None:
                group.append((variant_short(variant), [TextCell("no correct setting", "failed")]
                              + [TextCell("—")] * 5))
                continue
            at = select(totals, graph=graph, variant=variant, ordering=best[0], config=best[1])
            cells = [TextCell(f"{best[1]}, {ORDER_SHORT.get(best[0], best[0])}"), best[2]]
            if base is None:
                cells += [TextCell("no correct bmf", "failed"), TextCell("—")]
            else:
                cells += [base[2], verdict_text("opt", "bmf", best[2], base[2])]
            base_at = select(totals, graph=graph, variant=BASELINE, ordering=base[0], config=base[1]) \
                if base is not None else at.iloc[0:0]
            for column, unit in (("rounds", "count"), ("processed_per_edge", "ratio")):
                mine, theirs = summarize(at, column, unit), summarize(base_at, column, unit)
                cells.append(TextCell(f"{format_number(mine.median, unit)} / {format_number(theirs.median, unit)}",
                                      "number"))
            group.append((variant_short(variant), cells))
        per_graph.append((graph, group))
    rows, breaks = grouped_rows(per_graph)
    return Table(id="paper-opt", title="opt vs bmf out-of-core", caption="", graph="", row_header="graph",
                 columns=["setting", "at", "total ms", "bmf out ms", "faster", "rounds opt / bmf",
                          "relaxed/|E| opt / bmf"], rows=rows, breaks=breaks)


def sentences_for(key: str, observations: list[Observation]) -> list[str]:
    """The strongest generated sentences of this exhibit's questions, over every graph."""
    chosen = sorted((o for o in observations if o.topic in TOPICS[key]), key=lambda o: o.rank)
    return [o.text for o in chosen[:PER_ITEM]]


def captions(context: str, repetitions: str, cpu: bool) -> dict[str, str]:
    """One line per exhibit: what is shown, the statistic, the repetitions, then the device and
    graphs (``context``: 'on GPU ...; graphs: A (...), B (...)')."""
    stat = f"median [min–max] over the correct repetitions ({repetitions})"
    grid = " (the numpy fallback simulates the grid: no GPU claim)" if cpu else ""
    return {
        "configurations": f"Computation kernel time in ms per block size × block count{grid}, each method in the "
                          f"spec's edge order (tpe: computation stage only), {stat}; {context}.",
        "ordering": f"Computation kernel time in ms per edge order at each method's fastest configuration, "
                    f"{stat}; {context}.",
        "sync": f"Computation kernel time in ms of each method's fastest configuration out-of-core and in-core, "
                f"per edge order, {stat}, and the rounds to converge (median); {context}.",
        "segscan": f"Computation kernel time in ms of segscan and bmf out-of-core on destination-sorted edges at "
                   f"each one's fastest configuration, {stat}; ≈: within noise; {context}.",
        "filtering": f"tpe's computation and filtering stage times in ms (source order) per configuration, "
                     f"out-of-core and in-core, {stat}; labels: filtering's share; {context}.",
        "opt": f"Total kernel time (computation + filtering) in ms of opt's and bmf out-of-core's fastest "
               f"settings, {stat}; rounds and edges relaxed per graph edge at those settings (median); "
               f"{context}.",
    }


def paper_items(frame: pd.DataFrame, observations: list[Observation], context: str, repetitions: str,
                program_is_project: bool) -> list[PaperItem]:
    """The six exhibits in the spec's order, numbered as LaTeX numbers them; figures get their
    Plot from report.paperset_plots."""
    tables = {"configurations": configurations_table, "sync": sync_table, "segscan": segscan_table,
              "opt": opt_table}
    caption_of = captions(context, repetitions, on_cpu(frame))
    counts = {"table": 0, "figure": 0}
    items = []
    for key, kind, question in QUESTIONS:
        counts[kind] += 1
        item = PaperItem(kind, counts[kind], key, question, caption_of[key],
                         sentences=sentences_for(key, observations))
        if kind == "table":
            item.table = tables[key](frame)
            item.table.caption = item.caption
        if key == "opt":
            item.intuition = PROJECT_OPT_INTUITION if program_is_project else OTHER_OPT_INTUITION
        items.append(item)
    return items

