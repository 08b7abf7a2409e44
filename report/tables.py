"""Pure functions: results frame → the tables the spec's "What to Report?" asks for.

Why pure: the same Table objects feed Markdown, HTML and LaTeX, the plots and
the observations, so every format shows the same numbers and the same marks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from .cells import Cell, TextCell, format_number, format_times, summarize

from sssp_common.vocabulary import ORDERINGS, SYNC_NAMES, SYNCS, config_label
from sssp_common.vocabulary import SPEC_CONFIGS as _SPEC_PAIRS

# The spec's five execution configurations, in its order, as the report labels them.
SPEC_CONFIGS = tuple(config_label(b, c) for b, c in _SPEC_PAIRS)
VARIANTS = ("bmf outcore", "bmf incore", "segscan", "tpe outcore", "tpe incore", "opt outcore", "opt incore")
BASELINE = "bmf outcore"


@dataclass
class Table:
    """A rendered-format-neutral table: header groups, columns, labelled rows of cells."""
    id: str
    title: str
    caption: str
    graph: str
    row_header: str
    columns: list[str]
    rows: list[tuple[str, list]]
    column_groups: list[tuple[str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def cell(self, row_label: str, column: str):
        """The cell at (row label, column name) — the column's first match when groups repeat names."""
        index = self.columns.index(column)
        return dict(self.rows)[row_label][index]

    def grouped_cell(self, row_label: str, group: str, column: str):
        """The cell under a column group (e.g. 'out-of-core') and a column ('source')."""
        start = 0
        for name, span in self.column_groups:
            if name == group:
                index = self.columns[start:start + span].index(column) + start
                return dict(self.rows)[row_label][index]
            start += span
        raise KeyError(group)


def slug(text: str) -> str:
    """'roadNet-CA~synth' → 'roadnet-ca-synth' (HTML id / LaTeX label safe)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def graphs(frame: pd.DataFrame) -> list[str]:
    """Graphs in the order they were first run."""
    return list(dict.fromkeys(frame["graph"]))


def configs(frame: pd.DataFrame) -> list[str]:
    """The spec's five configurations first, then any other the sweep ran."""
    present = list(dict.fromkeys(frame["config"])) if len(frame) else []
    extra = sorted((c for c in present if c not in SPEC_CONFIGS),
                   key=lambda c: [int(x) for x in c.split("×")] if "×" in c else [1 << 30])
    return list(SPEC_CONFIGS) + extra


def with_total(frame: pd.DataFrame) -> pd.DataFrame:
    """Adds total_ms = computation + filtering (a missing filtering line counts as 0)."""
    return frame.assign(total_ms=frame["computation_ms"] + frame["filtering_ms"].fillna(0.0))


def select(frame: pd.DataFrame, **equal) -> pd.DataFrame:
    """Rows where every given column equals the given value."""
    mask = pd.Series(True, index=frame.index)
    for column, value in equal.items():
        mask &= frame[column] == value
    return frame[mask]


def cell_grid(frame: pd.DataFrame, graph: str, variant: str, ordering: str, value: str,
              unit: str = "ms") -> dict[str, Cell]:
    """config → Cell for one graph, variant and ordering."""
    runs = select(frame, graph=graph, variant=variant, ordering=ordering)
    groups = dict(tuple(runs.groupby("config", sort=False))) if len(runs) else {}
    return {config: summarize(groups.get(config), value, unit) for config in configs(frame)}


def present_columns(frame: pd.DataFrame, method: str, expected: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(sync, ordering) pairs: the spec's expected ones, then others the sweep ran for this method."""
    runs = select(frame, method=method)
    seen = list(dict.fromkeys(zip(runs["sync"], runs["ordering"])))
    extra = [pair for pair in seen if pair not in expected]
    order = {s: i for i, s in enumerate(SYNCS)}
    extra.sort(key=lambda p: (order.get(p[0], 9), ORDERINGS.index(p[1]) if p[1] in ORDERINGS else 9))
    return list(expected) + extra


def grouped_time_table(frame: pd.DataFrame, graph: str, method: str, pairs: list[tuple[str, str]],
                       title: str, caption: str) -> Table:
    """Configurations (rows) × sync groups × orderings (columns) of computation time."""
    groups: list[tuple[str, int]] = []
    columns: list[str] = []
    grids = []
    for sync in dict.fromkeys(s for s, _ in pairs):
        orderings = [o for s, o in pairs if s == sync]
        groups.append((SYNC_NAMES.get(sync, sync), len(orderings)))
        for ordering in orderings:
            columns.append(ordering)
            variant = _variant(method, sync)
            grids.append(cell_grid(frame, graph, variant, ordering, "computation_ms"))
    rows = [(config, [grid[config] for grid in grids]) for config in configs(frame)]
    table = Table(id=f"{slug(method)}-{slug(graph)}", title=title, caption=caption, graph=graph,
                  row_header="block size × count", columns=columns, rows=rows, column_groups=groups)
    if not len(select(frame, graph=graph, method=method)):
        table.notes.append(f"{method} was not run on {graph}: every cell is missing.")
    return table


def _variant(method: str, sync: str) -> str:
    from .load import variant_label
    return variant_label(method, sync)


def bmf_table(frame: pd.DataFrame, graph: str) -> Table:
    pairs = present_columns(frame, "bmf", [(s, o) for s in SYNCS for o in ORDERINGS])
    return grouped_time_table(frame, graph, "bmf", pairs, f"bmf computation time on {graph}",
                              f"Bellman-Ford (bmf) computation time in ms on {graph}: median over repetitions "
                              "[min–max], per block configuration, edge ordering and sync method.")


def segscan_table(frame: pd.DataFrame, graph: str) -> Table:
    pairs = present_columns(frame, "segscan", [("outcore", "destination")])
    return grouped_time_table(frame, graph, "segscan", pairs, f"segscan computation time on {graph}",
                              f"bmf with shared-memory segmented min-scan (segscan) computation time in ms on "
                              f"{graph}, edges sorted by destination, out-of-core.")


def opt_table(frame: pd.DataFrame, graph: str) -> Table:
    pairs = present_columns(frame, "opt", [])
    if not pairs:
        pairs = [("outcore", "source"), ("incore", "source")]
    return grouped_time_table(frame, graph, "opt", pairs, f"opt computation time on {graph}",
                              f"Optimized method (opt) computation time in ms on {graph}.")


def tpe_table(frame: pd.DataFrame, graph: str) -> Table:
    """tpe: computation, filtering and their total per sync (source order unless the sweep ran others)."""
    frame = with_total(frame)
    pairs = present_columns(frame, "tpe", [("outcore", "source"), ("incore", "source")])
    groups, columns, grids = [], [], []
    stages = (("computation", "computation_ms"), ("filtering", "filtering_ms"), ("total", "total_ms"))
    for sync, ordering in pairs:
        name = SYNC_NAMES.get(sync, sync) + ("" if ordering == "source" else f", {ordering}")
        groups.append((name, len(stages)))
        for stage, column in stages:
            columns.append(stage)
            grids.append(cell_grid(frame, graph, _variant("tpe", sync), ordering, column))
    rows = [(config, [grid[config] for grid in grids]) for config in configs(frame)]
    table = Table(id=f"tpe-{slug(graph)}", title=f"tpe computation and filtering time on {graph}",
                  caption=f"Work-efficient to-process-edge method (tpe) on {graph}, edges sorted by source: "
                          "computation and filtering stage times in ms, median [min–max].",
                  graph=graph, row_header="block size × count", columns=columns, rows=rows, column_groups=groups)
    if not len(select(frame, graph=graph, method="tpe")):
        table.notes.append(f"tpe was not run on {graph}: every cell is missing.")
    return table


def best_cells(frame: pd.DataFrame, graph: str, variant: str, value: str = "computation_ms"):
    """All (ordering, config, Cell) of a variant on a graph, for picking the best clean one."""
    runs = select(frame, graph=graph, variant=variant)
    out = []
    for (ordering, config), group in runs.groupby(["ordering", "config"], sort=False):
        out.append((ordering, config, summarize(group, value)))
    return out


def best_clean(frame: pd.DataFrame, graph: str, variant: str, value: str = "computation_ms"):
    """(ordering, config, Cell) with the lowest median among cells whose every rep was ok, or None."""
    clean = [item for item in best_cells(frame, graph, variant, value) if item[2].clean]
    return min(clean, key=lambda item: item[2].median) if clean else None


def summary_table(frame: pd.DataFrame, graph: str) -> Table:
    """Per variant: its best clean setting and the speed-up over the best bmf out-of-core."""
    frame = with_total(frame)
    base = best_clean(frame, graph, BASELINE)
    rows = []
    for variant in variants(frame):
        best = best_clean(frame, graph, variant)
        runs = select(frame, graph=graph, variant=variant)
        if best is None:
            reason = "not run" if not len(runs) else "no setting with every repetition ok"
            rows.append((variant, [TextCell("—"), TextCell("—"), summarize(runs, "computation_ms") if len(runs) else Cell(),
                                   TextCell("—"), TextCell("—"), TextCell(reason)]))
            continue
        ordering, config, cell = best
        total = summarize(select(frame, graph=graph, variant=variant, ordering=ordering, config=config), "total_ms")
        speedup = TextCell(format_times(base[2].median / cell.median), "number") if base else TextCell("—")
        speedup_total = "—"
        if base:
            base_total = summarize(select(frame, graph=graph, variant=BASELINE, ordering=base[0], config=base[1]),
                                   "total_ms")
            speedup_total = format_times(base_total.median / total.median)
        rows.append((variant, [TextCell(ordering), TextCell(config), cell, total, speedup,
                               TextCell(speedup_total, "number")]))
    return Table(id=f"summary-{slug(graph)}", title=f"Best setting per method on {graph}",
                 caption=f"Fastest setting per method on {graph} among settings whose every repetition was correct: "
                         "computation time and computation + filtering time in ms, and speed-up over the fastest "
                         "bmf out-of-core setting.",
                 graph=graph, row_header="method",
                 columns=["ordering", "config", "computation", "+ filtering", "speed-up", "speed-up (total)"],
                 rows=rows)


def variants(frame: pd.DataFrame) -> list[str]:
    """Known variants in the spec's order, then any other in the results."""
    seen = list(dict.fromkeys(frame["variant"])) if len(frame) else []
    return [v for v in VARIANTS if v in seen or v.startswith("opt")] + [v for v in seen if v not in VARIANTS]


def work_ordering(frame: pd.DataFrame, graph: str, variant: str) -> str | None:
    """Ordering used to compare work: source (tpe's ordering) when run, else the one with most ok runs."""
    runs = select(frame, graph=graph, variant=variant)
    ok = runs[runs["status"] == "ok"]
    if not len(ok):
        return None
    if (ok["ordering"] == "source").any():
        return "source"
    return ok["ordering"].value_counts().index[0]


def work_table(frame: pd.DataFrame, graph: str) -> Table:
    """Work efficiency: rounds, edges relaxed, edges per graph edge, edges scanned by filtering."""
    frame = frame.assign(processed_per_edge=frame["edges_processed"].astype("float64")
                         / frame["graph_edges"].astype("float64"),
                         filtered_per_edge=frame["edges_filtered"].astype("float64")
                         / frame["graph_edges"].astype("float64"))
    rows = []
    for variant in variants(frame):
        ordering = work_ordering(frame, graph, variant)
        runs = select(frame, graph=graph, variant=variant, ordering=ordering) if ordering else frame.iloc[0:0]
        cells = [summarize(runs, "rounds", "count"), summarize(runs, "edges_processed", "count"),
                 summarize(runs, "processed_per_edge", "ratio"), summarize(runs, "edges_filtered", "count"),
                 summarize(runs, "filtered_per_edge", "ratio")]
        rows.append((variant, [TextCell(ordering or "—")] + cells))
    edges = select(frame, graph=graph)["graph_edges"].dropna()
    size = f" ({format_number(edges.iloc[0], 'count')} edges)" if len(edges) else ""
    return Table(id=f"work-{slug(graph)}", title=f"Work efficiency on {graph}",
                 caption=f"Work per method on {graph}{size}: rounds, edges relaxed by the computation stage, "
                         "the same per graph edge, and edges scanned by the filtering stage; median over "
                         "configurations and repetitions [min–max].",
                 graph=graph, row_header="method",
                 columns=["ordering", "rounds", "edges processed", "processed / |E|", "scanned by filtering",
                          "scanned / |E|"],
                 rows=rows)


ORDER_SHORT = {"given": "given", "source": "src", "destination": "dst"}


def overview_table(frame: pd.DataFrame) -> Table:
    """Graphs × methods: each method's fastest correct computation time — the paper's one-glance table."""
    columns = variants(frame)
    rows = []
    for graph in graphs(frame):
        cells = []
        for variant in columns:
            runs = select(frame, graph=graph, variant=variant)
            best = best_clean(frame, graph, variant)
            if not len(runs):
                cells.append(TextCell("—"))
            elif best is None:
                cells.append(TextCell("✗ no correct setting", "failed"))
            else:
                ordering, config, cell = best
                cells.append(TextCell(f"{format_number(cell.median)} ({config}, {ORDER_SHORT.get(ordering, ordering)})",
                                      "number"))
        rows.append((graph, cells))
    return Table(id="overview", title="Fastest correct setting per graph and method",
                 caption="Median computation time in ms of each method's fastest setting whose every repetition "
                         "was correct, with its block configuration and edge order (src: sorted by source, "
                         "dst: sorted by destination); filtering time not included.",
                 graph="", row_header="graph", columns=[variant_name_short(v) for v in columns], rows=rows)


def variant_name_short(variant: str) -> str:
    """'bmf outcore' → 'bmf out', for narrow column headers."""
    return variant.replace("outcore", "out").replace("incore", "in")


def status_table(frame: pd.DataFrame) -> Table:
    """Run counts per graph × variant × status: the correctness overview."""
    statuses = [s for s in ("ok", "wrong", "timeout", "crash", "malformed", "no_output")
                if s in set(frame["status"])] + sorted(set(frame["status"]) - {"ok", "wrong", "timeout", "crash",
                                                                                "malformed", "no_output"})
    rows = []
    for graph in graphs(frame):
        for variant in variants(frame):
            runs = select(frame, graph=graph, variant=variant)
            counts = runs["status"].value_counts()
            rows.append((f"{graph} · {variant}",
                         [TextCell(str(int(counts.get(s, 0))), "number") if len(runs) else TextCell("—")
                          for s in statuses]))
    return Table(id="status", title="Run status", caption="Runs per graph and method by status "
                 "(ok: output matched the reference).", graph="", row_header="graph · method",
                 columns=[s.replace("_", " ") for s in statuses], rows=rows)


def failures_table(frame: pd.DataFrame) -> Table:
    """Every run that was not ok, with the grader's reason."""
    failed = frame[frame["status"] != "ok"]
    rows = []
    for _, run in failed.iterrows():
        label = f"{run['graph']} · {run['variant']}"
        rows.append((label, [TextCell(run["ordering"]), TextCell(run["config"]), TextCell(str(run["rep"])),
                             TextCell(run["status"].replace("_", " ")), TextCell(run["detail"][:160])]))
    return Table(id="failures", title="Runs that failed", caption="Runs that were not ok and why.",
                 graph="", row_header="graph · method", columns=["ordering", "config", "rep", "status", "detail"],
                 rows=rows)


def graph_tables(frame: pd.DataFrame, graph: str) -> list[Table]:
    """All tables of one graph, in report order."""
    return [summary_table(frame, graph), bmf_table(frame, graph), segscan_table(frame, graph),
            tpe_table(frame, graph), opt_table(frame, graph), work_table(frame, graph)]
