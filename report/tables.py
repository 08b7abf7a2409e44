"""Pure functions: results frame → the tables the spec's "What to Report?" asks for.

Why pure: the same Table objects feed Markdown, HTML and LaTeX, the plots and
the observations, so every format shows the same numbers and the same marks.
Why few, dense tables: one time table per graph (every setting × the five
configurations) and one method table (best setting, speed-up, work) replace a
table per method, so a two-column paper can \\input them all without floats piling up.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import pandas as pd

from .cells import Cell, TextCell, format_number, format_times, summarize
from .compare import FASTER, compare

from sssp_common.vocabulary import ORDERINGS, PAPER_METHODS, STATUSES, SYNC_NAMES, config_label
from sssp_common.vocabulary import SPEC_CONFIGS as _SPEC_PAIRS

# The spec's five execution configurations, in its order, as the report labels them.
SPEC_CONFIGS = tuple(config_label(b, c) for b, c in _SPEC_PAIRS)
VARIANTS = ("bmf outcore", "bmf incore", "segscan", "tpe outcore", "tpe incore", "opt outcore", "opt incore")
BASELINE = "bmf outcore"
ORDER_SHORT = {"given": "given", "source": "src", "destination": "dst"}
SYNC_SHORT = {"outcore": "out", "incore": "in"}


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
    breaks: list[int] = field(default_factory=list)   # row indices preceded by a rule (new method)

    def cell(self, row_label: str, column: str):
        """The cell at (row label, column name)."""
        index = self.columns.index(column)
        return dict(self.rows)[row_label][index]

    @property
    def all_ok(self) -> bool:
        """No cell shows a failure (such tables may be collapsed in HTML)."""
        return not any(getattr(cell, "state", "") in ("failed", "mixed") for _, cells in self.rows for cell in cells)


def slug(text: str) -> str:
    """'roadNet-CA~synth' → 'roadnet-ca-synth' (HTML id / LaTeX label / file name safe); a long
    one is cut to 64 characters and told apart by a digest of the whole (a file name has 255)."""
    made = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(made) <= 72:
        return made
    return made[:64].strip("-") + "-" + hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()[:8]


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
    if "total_ms" in frame.columns:
        return frame
    return frame.assign(total_ms=frame["computation_ms"] + frame["filtering_ms"].fillna(0.0))


def select(frame: pd.DataFrame, **equal) -> pd.DataFrame:
    """Rows where every given column equals the given value."""
    mask = pd.Series(True, index=frame.index)
    for column, value in equal.items():
        mask &= frame[column] == value
    return frame[mask]


def on_cpu(frame: pd.DataFrame, graph: str | None = None) -> bool:
    """True when any run (of this graph) is the numpy fallback: the grid is then not a GPU grid."""
    runs = frame if graph is None else select(frame, graph=graph)
    return bool(len(runs)) and bool(runs["cpu"].any())


def cell_grid(frame: pd.DataFrame, graph: str, variant: str, ordering: str, value: str,
              unit: str = "ms") -> dict[str, Cell]:
    """config → Cell for one graph, variant and ordering."""
    runs = select(frame, graph=graph, variant=variant, ordering=ordering)
    groups = dict(tuple(runs.groupby("config", sort=False))) if len(runs) else {}
    return {config: summarize(groups.get(config), value, unit) for config in configs(frame)}


def variants(frame: pd.DataFrame) -> list[str]:
    """The spec's variants in its order (opt always, as the optional part), then the seed
    papers' methods, then any other variant in the results."""
    seen = list(dict.fromkeys(frame["variant"])) if len(frame) else []
    spec = [v for v in VARIANTS if v in seen or v.startswith("opt")]
    papers = [v for method in PAPER_METHODS for v in seen if v.split(" ")[0] == method]
    return spec + papers + [v for v in seen if v not in spec and v not in papers]


def variant_name(variant: str) -> str:
    """'bmf outcore' → 'bmf out-of-core'."""
    method, _, sync = variant.partition(" ")
    return f"{method} {SYNC_NAMES.get(sync, sync)}".strip()


def variant_short(variant: str) -> str:
    """'bmf outcore' → 'bmf out', for narrow headers."""
    method, _, sync = variant.partition(" ")
    return f"{method} {SYNC_SHORT.get(sync, sync)}".strip()


def orderings_of(frame: pd.DataFrame, graph: str, variant: str) -> list[str]:
    present = set(select(frame, graph=graph, variant=variant)["ordering"])
    return [o for o in ORDERINGS if o in present] + sorted(present - set(ORDERINGS))


def best_cells(frame: pd.DataFrame, graph: str, variant: str, value: str = "computation_ms"):
    """All (ordering, config, Cell) of a variant on a graph."""
    frame = with_total(frame) if value == "total_ms" else frame
    runs = select(frame, graph=graph, variant=variant)
    return [(ordering, config, summarize(group, value))
            for (ordering, config), group in runs.groupby(["ordering", "config"], sort=False)]


def best_clean(frame: pd.DataFrame, graph: str, variant: str, value: str = "computation_ms"):
    """(ordering, config, Cell) with the lowest median among cells whose every rep was ok, or None."""
    clean = [item for item in best_cells(frame, graph, variant, value) if item[2].clean]
    return min(clean, key=lambda item: (item[2].median, item[0], item[1])) if clean else None


def has_filtering(frame: pd.DataFrame, graph: str, variant: str) -> bool:
    runs = select(frame, graph=graph, variant=variant)
    return bool((runs.loc[runs["status"] == "ok", "filtering_ms"].fillna(0) > 0).any())


# ---- the per-graph tables ----------------------------------------------------------------------

def time_table(frame: pd.DataFrame, graph: str) -> Table:
    """Every setting (method, sync, ordering; tpe's and opt's two stages apart) × configuration."""
    rows, breaks = [], []
    for variant in variants(frame):
        orderings = orderings_of(frame, graph, variant)
        if not orderings:
            continue
        stages = [("", "computation_ms")]
        if has_filtering(frame, graph, variant):
            stages = [("comp.", "computation_ms"), ("filt.", "filtering_ms")]
        breaks.append(len(rows))
        for ordering in orderings:
            for stage, column in stages:
                grid = cell_grid(frame, graph, variant, ordering, column)
                label = " · ".join(part for part in (variant_short(variant), ORDER_SHORT.get(ordering, ordering),
                                                     stage) if part)
                rows.append((label, [grid[config] for config in configs(frame)]))
    cpu = " CPU fallback (numpy): the grid is simulated, not run on a GPU." if on_cpu(frame, graph) else ""
    table = Table(id=f"times-{slug(graph)}", title=f"Time per setting and block configuration on {graph}",
                  caption=f"Kernel time in ms on {graph}: median over the repetitions that were correct "
                          "[min–max], per method, sync (out: out-of-core, in: in-core), edge order "
                          "(src/dst: sorted by source/destination) and block size × block count; comp./filt.: "
                          f"computation and filtering stages. opt sizes its grid itself (-bcount ignored).{cpu}",
                  graph=graph, row_header="setting", columns=configs(frame), rows=rows, breaks=breaks[1:])
    if not rows:
        table.notes.append(f"Nothing was run on {graph}.")
    return table


def work_values(frame: pd.DataFrame) -> pd.DataFrame:
    edges = frame["graph_edges"].astype("float64")
    return frame.assign(processed_per_edge=frame["edges_processed"].astype("float64") / edges,
                        filtered_per_edge=frame["edges_filtered"].astype("float64") / edges)


def method_table(frame: pd.DataFrame, graph: str) -> Table:
    """Per variant: its best correct setting (by total kernel time), the speed-up over the best
    bmf out-of-core setting (said to be noise when the ranges overlap), and the work it did there."""
    frame = work_values(with_total(frame))
    base = best_clean(frame, graph, BASELINE, "total_ms")
    rows = []
    for variant in variants(frame):
        runs = select(frame, graph=graph, variant=variant)
        best = best_clean(frame, graph, variant, "total_ms")
        if best is None:
            reason = "not run" if not len(runs) else "✗ no setting correct in every repetition"
            rows.append((variant_short(variant), [TextCell(reason, "missing" if not len(runs) else "failed")]
                         + [TextCell("—")] * 5))
            continue
        ordering, config, cell = best
        at = select(runs, ordering=ordering, config=config)
        speedup = TextCell("—")
        if base is not None and variant != BASELINE:
            verdict = compare(cell, base[2])
            ratio = base[2].median / cell.median
            text = format_times(ratio)
            speedup = TextCell(text if verdict.kind == FASTER else f"≈ ({text}, noise)", "number")
        elif variant == BASELINE:
            speedup = TextCell("1 (base)", "number")
        rows.append((variant_short(variant), [
            TextCell(f"{config}, {ORDER_SHORT.get(ordering, ordering)}"), cell, speedup,
            summarize(at, "rounds", "count"), summarize(at, "processed_per_edge", "ratio"),
            summarize(at, "filtered_per_edge", "ratio")]))
    return Table(id=f"methods-{slug(graph)}", title=f"Best setting per method on {graph}",
                 caption=f"Each method's fastest setting on {graph} among those correct in every repetition, by "
                         "total kernel time (computation + filtering) in ms, median [min–max]; speed-up over the "
                         "fastest bmf out-of-core setting (≈: within noise, the ranges overlap when outlying repetitions "
                         "count too, so no speed-up is claimed); at "
                         "that setting: rounds, edges relaxed per graph edge, edges scanned by filtering per graph "
                         "edge.",
                 graph=graph, row_header="method",
                 columns=["best setting", "total ms", "speed-up", "rounds", "relaxed/|E|", "scanned/|E|"],
                 rows=rows)


def graph_tables(frame: pd.DataFrame, graph: str) -> list[Table]:
    """All tables of one graph, in report order."""
    return [method_table(frame, graph), time_table(frame, graph)]


# ---- report-wide tables ------------------------------------------------------------------------

OVERVIEW_COLUMNS = 7   # variants per overview table: wider tables are split


def overview_tables(frame: pd.DataFrame) -> list[Table]:
    """Graphs × methods: each method's best total kernel time; split every 7 methods to fit a page."""
    frame = with_total(frame)
    names = variants(frame)
    chunks = [names[i:i + OVERVIEW_COLUMNS] for i in range(0, len(names), OVERVIEW_COLUMNS)] or [[]]
    tables = []
    for number, chunk in enumerate(chunks):
        rows = []
        for graph in graphs(frame):
            cells = []
            for variant in chunk:
                best = best_clean(frame, graph, variant, "total_ms")
                if not len(select(frame, graph=graph, variant=variant)):
                    cells.append(TextCell("—"))
                elif best is None:
                    cells.append(TextCell("✗ failed", "failed"))
                else:
                    cells.append(TextCell(format_number(best[2].median), "number"))
            rows.append((graph, cells))
        part = f" ({number + 1} of {len(chunks)})" if len(chunks) > 1 else ""
        tables.append(Table(id="overview" + (f"-{number + 1}" if number else ""),
                            title=f"Fastest correct setting per graph and method{part}",
                            caption="Median total kernel time (computation + filtering) in ms of each method's "
                                    "fastest setting whose every repetition was correct; per-graph tables give "
                                    "the setting and the spread. failed: no setting was correct; —: not run.",
                            graph="", row_header="graph", columns=[variant_short(v) for v in chunk], rows=rows))
    return tables


def graphs_table(infos: dict) -> Table:
    """Each graph's size, whether it is the real file or a stand-in, and the stand-in's scale,
    from catalogue.describe_all's {graph: GraphInfo} (the sections show the same infos)."""
    rows = []
    for graph, info in infos.items():
        rows.append((graph, [TextCell(info.vertices_text, "number"), TextCell(info.edges_text, "number"),
                             TextCell(info.kind), TextCell(info.real_text), TextCell(info.scale_text, "number")]))
    return Table(id="graphs", title="Graphs", caption="The graphs of this report: vertices (largest id + 1) and "
                 "edges as run; real: the published file itself; stand-in: a generated graph of the same shape "
                 "(names end in ~synth) at a fraction of the real graph's size, which the last columns give. "
                 "Power-law stand-ins are R-MAT with every isolated vertex given one in- and one out-edge "
                 "(grader.data.synth v2): one weak component, as SNAP's social graphs (LiveJournal stand-in "
                 "99.2% of vertices, largest strong component 79.4%; SNAP: 99.9%, 79.0%).",
                 graph="", row_header="graph", columns=["vertices", "edges", "file", "real graph (V / E)",
                                                        "scale (edges)"], rows=rows)


def status_table(frame: pd.DataFrame) -> Table:
    """Run counts per graph × status: the correctness overview."""
    present = set(frame["status"])
    statuses = [s for s in STATUSES if s in present] + sorted(present - set(STATUSES))
    rows = []
    for graph in graphs(frame):
        counts = select(frame, graph=graph)["status"].value_counts()
        rows.append((graph, [TextCell(str(int(counts.get(s, 0))), "number") for s in statuses]))
    return Table(id="status", title="Run status", caption="Measured runs per graph by status (ok: every "
                 "distance matched the reference); warm-up runs are not counted.", graph="", row_header="graph",
                 columns=[s.replace("_", " ") for s in statuses], rows=rows)


def failures_table(frame: pd.DataFrame) -> Table:
    """Every run that was not ok, with the grader's reason (whole: the HTML wraps it)."""
    failed = frame[frame["status"] != "ok"]
    rows = []
    for _, run in failed.iterrows():
        label = f"{run['graph']} · {variant_short(run['variant'])}"
        rows.append((label, [TextCell(ORDER_SHORT.get(run["ordering"], run["ordering"])), TextCell(run["config"]),
                             TextCell(str(run["rep"])), TextCell(run["status"].replace("_", " "), "failed"),
                             TextCell(run["detail"][:600])]))
    return Table(id="failures", title="Runs that failed", caption="Runs that were not ok and why; their settings "
                 "are left out of every comparison.", graph="", row_header="graph · method",
                 columns=["order", "config", "rep", "status", "detail"], rows=rows)


def outliers_table(frame: pd.DataFrame) -> Table:
    """Repetitions flagged as outliers (and so not used), with their cell's median."""
    rows = []
    ok = frame[frame["status"] == "ok"]
    for (graph, variant, ordering, config), group in ok.groupby(["graph", "variant", "ordering", "config"],
                                                                 sort=False):
        for column, stage in (("computation_ms", "computation"), ("filtering_ms", "filtering")):
            cell = summarize(group, column)
            for value in cell.outliers:
                rows.append((f"{graph} · {variant_short(variant)}", [
                    TextCell(ORDER_SHORT.get(ordering, ordering)), TextCell(config), TextCell(stage),
                    TextCell(format_number(value), "number"), TextCell(format_number(cell.median), "number")]))
    return Table(id="outliers", title="Outlying repetitions (not used)",
                 caption="Repetitions more than 3 median absolute deviations (at least 44% of the median) from "
                         "their setting's median; left out of medians, ranges and observations.",
                 graph="", row_header="graph · method",
                 columns=["order", "config", "stage", "ms", "median of the rest"],
                 rows=rows)
