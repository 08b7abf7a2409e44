"""The paper set's two figures: edge orderings, and tpe's computation vs filtering, one panel per graph.

Why panels: one figure per question, whatever the number of graphs, so the paper keeps one
exhibit per question; times of different graphs differ by orders of magnitude, so each
graph gets its own axis. Every figure says under it what ran it on what (the footer), and
names in its panel what it could not draw, so a gap is never silent.
"""
from __future__ import annotations

import math
import textwrap

from .plots import Plot, needs_log, new_figure, png_bytes, set_log_scale
from .tables import ORDER_SHORT, ORDERINGS, SPEC_CONFIGS, cell_grid, graphs, select, variant_short, variants

ORDER_COLORS = {"given": "#8da0cb", "source": "#66c2a5", "destination": "#fc8d62"}
SYNC_COLORS = {"outcore": "#2ca02c", "incore": "#ff7f0e"}
FOOTER_WIDTH = 150   # characters per footer line


def panels(count: int, width: float = 10.5, row_height: float = 3.2):
    """A figure with `count` panels, up to 3 a row; returns (figure, axes in reading order)."""
    columns = min(3, max(1, count))
    rows = math.ceil(max(1, count) / columns)
    figure = new_figure(width, row_height * rows + 0.9)
    grid = figure.subplots(rows, columns, squeeze=False)
    axes = [axis for row in grid for axis in row]
    for axis in axes[count:]:
        axis.set_visible(False)
    return figure, axes[:count]


def finish(figure, kind: str, title: str, caption: str, footer: str) -> Plot:
    figure.suptitle(title, fontsize=11)
    figure.supxlabel("\n".join(textwrap.wrap(footer, FOOTER_WIDTH)), fontsize=8, color="#444444")
    return Plot(f"paper-{kind}", title, caption, "", png_bytes(figure), footer)


def best_median(frame, graph: str, variant: str, ordering: str):
    """(median, config) of the fastest correct configuration, or None."""
    grid = {c: cell for c, cell in cell_grid(frame, graph, variant, ordering, "computation_ms").items()
            if cell.clean}
    if not grid:
        return None
    config = min(grid, key=lambda c: (grid[c].median, c))
    return grid[config].median, config


def ordering_figure(frame, caption: str, footer: str) -> Plot | None:
    """Per graph: each variant run in several orderings, its best computation time per ordering."""
    shown = [g for g in graphs(frame) if any(select(frame, graph=g, variant=v)["ordering"].nunique() >= 2
                                             for v in variants(frame))]
    if not shown:
        return None
    figure, axes = panels(len(shown))
    for axis, graph in zip(axes, shown):
        groups = [v for v in variants(frame) if select(frame, graph=graph, variant=v)["ordering"].nunique() >= 2]
        width = 0.8 / len(ORDERINGS)
        values, failed = [], []
        for g, variant in enumerate(groups):
            for k, ordering in enumerate(ORDERINGS):
                best = best_median(frame, graph, variant, ordering)
                if best is None:
                    if len(select(frame, graph=graph, variant=variant, ordering=ordering)):
                        failed.append(f"{variant_short(variant)} {ORDER_SHORT[ordering]}")
                    continue
                values.append(best[0])
                axis.bar(g - 0.4 + width * (k + 0.5), best[0], width * 0.95, color=ORDER_COLORS[ordering],
                         label=ordering if g == 0 else None)
        axis.set_xticks(range(len(groups)), [variant_short(v) for v in groups], fontsize=8)
        axis.set_ylabel("computation ms", fontsize=8)
        if needs_log(values):
            set_log_scale(axis)
        axis.set_title(graph + (f"\nno correct run: {', '.join(failed)}" if failed else ""), fontsize=9)
        axis.grid(True, axis="y", alpha=0.3)
        axis.tick_params(labelsize=7)
    axes[0].legend(title="edge order", fontsize=7, title_fontsize=7)
    return finish(figure, "ordering", "Edge ordering: fastest configuration per order (median)", caption, footer)


def tpe_figure(frame, caption: str, footer: str) -> Plot | None:
    """Per graph: tpe's computation (solid) and filtering (hatched) stacked, out- and in-core per config."""
    shown = [g for g in graphs(frame) if len(select(frame, graph=g, method="tpe"))]
    if not shown:
        return None
    figure, axes = panels(len(shown))
    for axis, graph in zip(axes, shown):
        syncs = [s for s in ("outcore", "incore") if len(select(frame, graph=graph, variant=f"tpe {s}"))]
        width = 0.8 / len(syncs)
        failed = []
        for k, sync in enumerate(syncs):
            variant = f"tpe {sync}"
            orders = select(frame, graph=graph, variant=variant)["ordering"]
            ordering = "source" if (orders == "source").any() else orders.iloc[0]
            comp = cell_grid(frame, graph, variant, ordering, "computation_ms")
            filt = cell_grid(frame, graph, variant, ordering, "filtering_ms")
            for x, config in enumerate(SPEC_CONFIGS):
                position = x - 0.4 + width * (k + 0.5)
                if not (comp[config].clean and filt[config].clean):
                    if comp[config].state != "missing":
                        failed.append(f"{sync} {config}")
                    continue
                c, f = comp[config].median, filt[config].median
                name = "out" if sync == "outcore" else "in"
                axis.bar(position, c, width * 0.95, color=SYNC_COLORS[sync],
                         label=f"{name}: computation" if x == 0 else None)
                axis.bar(position, f, width * 0.95, bottom=c, color=SYNC_COLORS[sync], alpha=0.4, hatch="//",
                         edgecolor="white", label=f"{name}: filtering" if x == 0 else None)
                if c + f > 0:
                    axis.text(position, c + f, f"{f / (c + f) * 100:.0f}%", ha="center", va="bottom", fontsize=6)
        axis.set_xticks(range(len(SPEC_CONFIGS)), SPEC_CONFIGS, fontsize=7)
        axis.set_ylabel("ms", fontsize=8)
        axis.set_ylim(0, axis.get_ylim()[1] * 1.25)
        axis.set_title(graph + (f"\nno correct run: {', '.join(failed)}" if failed else ""), fontsize=9)
        axis.grid(True, axis="y", alpha=0.3)
        axis.tick_params(labelsize=7)
    axes[0].legend(fontsize=6.5, ncol=2, loc="upper left")
    return finish(figure, "filtering", "tpe: computation (solid) and filtering (hatched) per configuration, "
                                       "source order (median)", caption, footer)


FIGURES = {"ordering": ordering_figure, "filtering": tpe_figure}
