"""Plots of the sweep: time across configurations, tpe's two stages, speed-ups, edge ordering.

Why matplotlib's object API (Figure + Agg canvas) and not pyplot: no global
state, no display needed, figures are closed as soon as their bytes exist.
Only cells whose every repetition was ok are drawn; the rest are named in the
figure so a gap is never silent.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from .cells import format_number  # noqa: E402
from .load import device_text  # noqa: E402
from .compare import compare  # noqa: E402
from .tables import variant_name  # noqa: E402
from .tables import (BASELINE, ORDERINGS, best_clean, cell_grid, configs, graphs, select, slug,  # noqa: E402
                     variants, with_total)

LOG_RANGE = 20.0  # a value range wider than this gets a log axis
SYNC_COLORS = {"outcore": "#1f77b4", "incore": "#d62728"}
ORDER_STYLES = {"given": ("o", ":"), "source": ("s", "-"), "destination": ("^", "--")}
METHOD_COLORS = {"bmf outcore": "#1f77b4", "bmf incore": "#d62728", "segscan": "#9467bd",
                 "tpe outcore": "#2ca02c", "tpe incore": "#ff7f0e", "opt outcore": "#17becf",
                 "opt incore": "#8c564b"}


@dataclass(frozen=True)
class Plot:
    id: str
    title: str
    caption: str
    graph: str
    png: bytes
    footer: str = ""   # device and graph status, drawn under the figure and ending the caption

    @property
    def filename(self) -> str:
        return f"{self.id}.png"


def needs_log(values) -> bool:
    values = [v for v in values if v and v > 0]
    return bool(values) and max(values) / min(values) > LOG_RANGE


def set_log_scale(axis) -> None:
    """Log y axis with plain tick labels (1, 2, 5, 10, 20, ...) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_yscale("log")
    axis.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.yaxis.set_minor_formatter(NullFormatter())


def new_figure(width: float = 9.0, height: float = 4.2) -> Figure:
    figure = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def png_bytes(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _plot(figure: Figure, kind: str, graph: str, title: str, caption: str, missing=(), why: str = "",
          sep: str = ", ", footer: str = "") -> Plot:
    """The drawn figure as the Plot "KIND-GRAPH"; the caption ends with what it could not show
    (``missing``, introduced by ``why``), so a reader never mistakes a gap for a result. The
    footer (device, stand-in status) is drawn under the plot and ends the caption too, so a
    figure pasted alone still says what ran it on what."""
    if missing:
        caption += f" {why}: {sep.join(missing)}."
    if footer:
        figure.supxlabel(footer, fontsize=8, color="#444444")
        caption += f" {footer}."
    return Plot(f"{kind}-{slug(graph)}", title, caption, graph, png_bytes(figure), footer)


def default_footer(frame, graph: str) -> str:
    """The footer when the caller gives none: the device the graph's runs printed, and a stand-in
    said by its name (report.render gives the catalogue's scale instead)."""
    status = f"stand-in for {graph.split('~', 1)[0]}" if graph.endswith("~synth") else "as named"
    return f"Device: {device_text(select(frame, graph=graph))}; graph {graph} ({status})"


def _series(frame, graph, variant, ordering, value="computation_ms"):
    """(x positions, medians, lower errors, upper errors, labels of unclean configs)."""
    grid = cell_grid(frame, graph, variant, ordering, value)
    xs, ys, lo, hi, bad = [], [], [], [], []
    for x, config in enumerate(configs(frame)):
        cell = grid[config]
        if cell.clean:
            xs.append(x)
            ys.append(cell.median)
            lo.append(cell.median - cell.low)
            hi.append(cell.high - cell.median)
        elif cell.state in ("failed", "mixed"):
            bad.append(config)
    return xs, ys, lo, hi, bad


def config_plot(frame, graph: str, footer: str = "") -> Plot | None:
    """Computation time across the five configurations: bmf's six lines left, the other methods right."""
    figure = new_figure(10.5, 5.4)
    left, right = figure.subplots(1, 2)
    panels = ((left, [v for v in variants(frame) if v.startswith("bmf")], "bmf (every ordering)"),
              (right, [v for v in variants(frame) if not v.startswith("bmf")], "segscan, tpe (computation), opt"))
    skipped, drawn = [], 0
    for axis, panel_variants, title in panels:
        values = []
        for variant in panel_variants:
            orderings = [o for o in ORDERINGS if len(select(frame, graph=graph, variant=variant, ordering=o))]
            for ordering in orderings:
                xs, ys, lo, hi, bad = _series(frame, graph, variant, ordering)
                skipped += [f"{variant} {ordering} {c}" for c in bad]
                if not xs:
                    continue
                marker, style = ORDER_STYLES.get(ordering, ("d", "-."))
                color = (SYNC_COLORS.get(variant.partition(" ")[2], "gray") if variant.startswith("bmf")
                         else METHOD_COLORS.get(variant, "gray"))
                label = f"{variant_name(variant)}, {ordering}" if variant.startswith("bmf") or len(orderings) > 1 \
                    else variant_name(variant)
                axis.errorbar(xs, ys, yerr=[lo, hi], marker=marker, linestyle=style, color=color, label=label,
                              capsize=3, markersize=5)
                values += ys
                drawn += 1
        axis.set_xticks(range(len(configs(frame))), configs(frame))
        axis.set_xlabel("block size × block count")
        axis.set_ylabel("computation time (ms)")
        axis.set_title(title, fontsize=10)
        axis.grid(True, alpha=0.3)
        if needs_log(values):
            set_log_scale(axis)
        if values and axis.get_legend_handles_labels()[0]:   # a fuzzed row can leave values but no labelled line
            axis.legend(fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, frameon=False)
        else:
            axis.text(0.5, 0.5, "no correct runs", transform=axis.transAxes, ha="center", color="gray")
    if not drawn:
        return None
    figure.suptitle(f"{graph}: computation time per configuration (median, bars = min–max)", fontsize=11)
    return _plot(figure, "configs", graph, f"Time across configurations on {graph}",
                 f"Computation time per block configuration on {graph}; median over repetitions, error bars "
                 "min–max.", skipped, "Not drawn (runs failed)", footer=footer)


def tpe_stages_plot(frame, graph: str, footer: str = "") -> Plot | None:
    """tpe computation + filtering as stacked bars, out-of-core and in-core side by side per configuration."""
    frame = with_total(frame)
    syncs = [s for s in ("outcore", "incore") if len(select(frame, graph=graph, variant=f"tpe {s}"))]
    if not syncs:
        return None
    figure = new_figure(9.0, 4.2)
    axis = figure.subplots()
    width = 0.8 / len(syncs)
    skipped, drawn = [], 0
    for k, sync in enumerate(syncs):
        variant = f"tpe {sync}"
        ordering = "source" if len(select(frame, graph=graph, variant=variant, ordering="source")) else \
            select(frame, graph=graph, variant=variant)["ordering"].iloc[0]
        comp = cell_grid(frame, graph, variant, ordering, "computation_ms")
        filt = cell_grid(frame, graph, variant, ordering, "filtering_ms")
        for x, config in enumerate(configs(frame)):
            position = x - 0.4 + width * (k + 0.5)
            if comp[config].clean and filt[config].clean:
                c, f = comp[config].median, filt[config].median
                axis.bar(position, c, width * 0.95, color=METHOD_COLORS[variant],
                         label=f"{variant_name(variant)}: computation" if x == 0 else None)
                axis.bar(position, f, width * 0.95, bottom=c, color=METHOD_COLORS[variant], alpha=0.45,
                         hatch="//", edgecolor="white",
                         label=f"{variant_name(variant)}: filtering" if x == 0 else None)
                axis.text(position, c + f, f"{f / (c + f) * 100:.0f}%", ha="center", va="bottom", fontsize=7)
                drawn += 1
            elif comp[config].state != "missing":
                skipped.append(f"{variant} {config}")
                axis.text(position, 0, "failed", rotation=90, ha="center", va="bottom", fontsize=8, color="#b00")
    if not drawn:
        return None
    axis.set_xticks(range(len(configs(frame))), configs(frame))
    axis.set_xlabel("block size × block count (labels: filtering share of the total)")
    axis.set_ylabel("time (ms)")
    axis.set_title(f"{graph}: tpe computation vs filtering (median, source order)", fontsize=11)
    axis.grid(True, axis="y", alpha=0.3)
    axis.set_ylim(0, axis.get_ylim()[1] * 1.3)
    axis.legend(fontsize=8, ncol=2, loc="upper left")
    return _plot(figure, "tpe-stages", graph, f"tpe computation vs filtering on {graph}",
                 f"tpe on {graph}: computation (solid) and filtering (hatched) stage times stacked, median in ms.",
                 skipped, "Failed", footer=footer)


def speedup_plot(frame, graph: str, footer: str = "") -> Plot | None:
    """Speed-up of each method's best correct setting over bmf out-of-core's best, log axis if wide.

    Total time (computation + filtering): tpe's computation alone would overstate it by the
    filtering stage it cannot run without."""
    frame = with_total(frame)
    base = best_clean(frame, graph, BASELINE, "total_ms")
    if base is None:
        return None
    names, ratios, notes, noisy = [], [], [], []
    for variant in variants(frame):
        best = best_clean(frame, graph, variant, "total_ms")
        if best is None:
            notes.append(f"{variant}: {'not run' if not len(select(frame, graph=graph, variant=variant)) else 'failed'}")
            continue
        names.append(f"{variant_name(variant)}\n{best[1]}, {best[0]}")
        ratios.append(base[2].median / best[2].median)
        noisy.append(variant != BASELINE and not compare(best[2], base[2]).called)
    figure = new_figure(9.0, 4.2)
    axis = figure.subplots()
    bars = axis.bar(range(len(names)), ratios, color=[METHOD_COLORS.get(v, "gray") for v in variants(frame)
                                                      if best_clean(frame, graph, v, "total_ms")])
    for bar, ratio, noise in zip(bars, ratios, noisy):
        label = f"{'≈ ' if noise else ''}{ratio:.2f}×"
        axis.text(bar.get_x() + bar.get_width() / 2, bar.get_height(), label, ha="center",
                  va="bottom", fontsize=8)
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.set_xticks(range(len(names)), names, fontsize=7.5)
    axis.set_ylabel("speed-up over bmf out-of-core (×)")
    if needs_log(ratios + [1.0]):
        set_log_scale(axis)
    axis.set_title(f"{graph}: speed-up over bmf out-of-core ({format_number(base[2].median)} ms at {base[1]}, "
                   f"{base[0]})", fontsize=10)
    axis.grid(True, axis="y", alpha=0.3)
    caption = (f"Speed-up of each method's fastest correct setting over the fastest bmf out-of-core setting "
               f"on {graph}, in total kernel time (computation + filtering); ≈: within noise of bmf out-of-core "
               "(the ranges overlap).")
    return _plot(figure, "speedup", graph, f"Speed-up over bmf out-of-core on {graph}", caption, notes,
                 "Not shown", sep="; ", footer=footer)


def ordering_plot(frame, graph: str, footer: str = "") -> Plot | None:
    """Best computation time per edge ordering, grouped by variant (variants run in ≥2 orderings)."""
    groups = []
    for variant in variants(frame):
        runs = select(frame, graph=graph, variant=variant)
        if runs["ordering"].nunique() >= 2:
            groups.append(variant)
    if not groups:
        return None
    figure = new_figure(8.0, 4.0)
    axis = figure.subplots()
    width = 0.8 / len(ORDERINGS)
    values, notes = [], []
    for g, variant in enumerate(groups):
        for k, ordering in enumerate(ORDERINGS):
            grid = cell_grid(frame, graph, variant, ordering, "computation_ms")
            clean = {c: cell for c, cell in grid.items() if cell.clean}
            position = g - 0.4 + width * (k + 0.5)
            if not clean:
                if any(cell.state != "missing" for cell in grid.values()):
                    notes.append(f"{variant} {ordering}")
                continue
            config = min(clean, key=lambda c: clean[c].median)
            value = clean[config].median
            values.append(value)
            axis.bar(position, value, width * 0.95, color=["#8da0cb", "#66c2a5", "#fc8d62"][k],
                     label=ordering if g == 0 else None)
            axis.text(position, value, config, ha="center", va="bottom", fontsize=7)
    if not values:
        return None
    axis.set_xticks(range(len(groups)), [variant_name(v) for v in groups])
    axis.set_ylabel("best computation time (ms)")
    if needs_log(values):
        set_log_scale(axis)
    axis.set_title(f"{graph}: effect of edge ordering (fastest configuration, labelled)", fontsize=10)
    axis.grid(True, axis="y", alpha=0.3)
    axis.legend(title="edge order", fontsize=8)
    return _plot(figure, "ordering", graph, f"Effect of edge ordering on {graph}",
                 f"Fastest correct computation time per edge ordering on {graph}; the bar label is its "
                 "configuration.", notes, "No correct configuration", footer=footer)


def all_plots(frame, footers: dict[str, str] | None = None) -> list[Plot]:
    """Every plot, graph by graph; plots with nothing to show are left out. ``footers``: graph →
    the device and stand-in line each of its figures carries (default_footer when absent)."""
    makers = (config_plot, tpe_stages_plot, speedup_plot, ordering_plot)
    footers = footers or {}
    return [plot for graph in graphs(frame) for make in makers
            if (plot := make(frame, graph, footers.get(graph) or default_footer(frame, graph))) is not None]
