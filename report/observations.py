"""Sentences generated from the numbers, each carrying the figures it rests on.

Why generated: the spec asks for data analysis; sentences written from the
same cells as the tables cannot drift from them. Only cells whose every
repetition was ok are compared; a comparison that failed runs prevent is said
to be impossible instead of being made.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .cells import Cell, format_number, format_times
from .tables import (BASELINE, ORDERINGS, SYNC_NAMES, best_clean, cell_grid, configs, graphs, select,
                     variants, with_total, work_ordering)


TOPIC_TITLES = {"configuration": "Block configuration", "sync": "In-core vs out-of-core",
                "ordering": "Edge ordering", "segscan": "Shared-memory segmented scan",
                "filtering": "tpe: filtering vs computation", "work": "Work efficiency",
                "opt": "opt vs bmf", "failures": "Settings left out (failed runs)"}


@dataclass(frozen=True)
class Observation:
    graph: str
    topic: str
    text: str

    @property
    def topic_title(self) -> str:
        return TOPIC_TITLES.get(self.topic, self.topic)


ORDER_PHRASES = {"given": "with edges as given", "source": "with edges sorted by source",
                 "destination": "with edges sorted by destination"}


def variant_name(variant: str) -> str:
    """'bmf outcore' → 'bmf out-of-core'."""
    method, _, sync = variant.partition(" ")
    return f"{method} {SYNC_NAMES.get(sync, sync)}".strip()


def ms(value: float) -> str:
    return f"{format_number(value)} ms"


times = format_times


def ordering_phrase(ordering: str) -> str:
    return ORDER_PHRASES.get(ordering, f"with {ordering} edge order")


def clean_cells(grid: dict[str, Cell]) -> dict[str, Cell]:
    return {config: cell for config, cell in grid.items() if cell.clean}


def unclean_note(grid: dict[str, Cell]) -> str:
    """' (not compared: 384×5 wrong (12))' for cells that ran but not cleanly."""
    bad = [f"{config} {cell.failure_text}" for config, cell in grid.items() if cell.state in ("failed", "mixed")]
    return f" (not compared: {'; '.join(bad)})" if bad else ""


def orderings_run(frame: pd.DataFrame, graph: str, variant: str) -> list[str]:
    present = set(select(frame, graph=graph, variant=variant)["ordering"])
    return [o for o in ORDERINGS if o in present] + sorted(present - set(ORDERINGS))


def fastest_configuration(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """Per variant and ordering: the fastest and slowest configuration and their ratio."""
    out = []
    for variant in variants(frame):
        for ordering in orderings_run(frame, graph, variant):
            grid = cell_grid(frame, graph, variant, ordering, "computation_ms")
            clean = clean_cells(grid)
            who = f"{variant_name(variant)} {ordering_phrase(ordering)}"
            run = [c for c, cell in grid.items() if cell.state != "missing"]
            if len(run) < 2:
                out.append(Observation(graph, "configuration", f"On {graph}, {who} was run in only {len(run)} "
                                       "configuration, so configurations cannot be compared."))
                continue
            if len(clean) < 2:
                count = "none" if not clean else "only one"
                out.append(Observation(graph, "configuration",
                                       f"On {graph}, the configurations of {who} cannot be compared: {count} of "
                                       f"its {len(run)} configurations ran correctly in every repetition"
                                       f"{unclean_note(grid)}."))
                continue
            fast = min(clean, key=lambda c: clean[c].median)
            slow = max(clean, key=lambda c: clean[c].median)
            out.append(Observation(graph, "configuration",
                                   f"On {graph}, {who} is fastest at {fast} ({ms(clean[fast].median)}), "
                                   f"{times(clean[slow].median / clean[fast].median)} faster than the slowest "
                                   f"configuration {slow} ({ms(clean[slow].median)}){unclean_note(grid)}."))
    return out


def median_work(frame: pd.DataFrame, graph: str, variant: str, ordering: str, column: str) -> float | None:
    runs = select(frame, graph=graph, variant=variant, ordering=ordering)
    values = pd.to_numeric(runs.loc[runs["status"] == "ok", column], errors="coerce").dropna()
    return float(values.median()) if len(values) else None


def incore_vs_outcore(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """Per method and ordering: best in-core vs best out-of-core, and the per-configuration ratio range."""
    out = []
    for method in ("bmf", "tpe", "opt"):
        outcore, incore = f"{method} outcore", f"{method} incore"
        for ordering in orderings_run(frame, graph, outcore):
            if ordering not in orderings_run(frame, graph, incore):
                continue
            grid_out = cell_grid(frame, graph, outcore, ordering, "computation_ms")
            grid_in = cell_grid(frame, graph, incore, ordering, "computation_ms")
            clean_out, clean_in = clean_cells(grid_out), clean_cells(grid_in)
            who = f"On {graph}, {method} {ordering_phrase(ordering)}"
            if not clean_out or not clean_in:
                out.append(Observation(graph, "sync", f"{who}: in-core and out-of-core cannot be compared, "
                                       "one of them has no configuration that ran correctly in every repetition."))
                continue
            best_out = min(clean_out, key=lambda c: clean_out[c].median)
            best_in = min(clean_in, key=lambda c: clean_in[c].median)
            ratio = clean_out[best_out].median / clean_in[best_in].median
            verb = f"{times(ratio)} faster" if ratio >= 1 else f"{times(1 / ratio)} slower"
            text = (f"{who}: in-core is {verb} than out-of-core at their best configurations "
                    f"({ms(clean_in[best_in].median)} at {best_in} vs {ms(clean_out[best_out].median)} at {best_out})")
            both = [c for c in configs(frame) if c in clean_out and c in clean_in]
            ratios = [clean_out[c].median / clean_in[c].median for c in both]
            if len(ratios) > 1:
                low, high = f"{min(ratios):.2f}", f"{max(ratios):.2f}"
                spread = f"is {low}× in all" if low == high else f"ranges {low}–{high}× over"
                text += f"; out-of-core / in-core time per configuration {spread} {len(ratios)} configurations"
            skipped = [c for c in configs(frame) if c not in both
                       and (grid_out[c].state in ("failed", "mixed") or grid_in[c].state in ("failed", "mixed"))]
            if skipped:
                text += f" ({', '.join(skipped)} not compared: runs failed)"
            rounds_out = median_work(frame, graph, outcore, ordering, "rounds")
            rounds_in = median_work(frame, graph, incore, ordering, "rounds")
            if rounds_out and rounds_in:
                text += (f". In-core needs {format_number(rounds_in, 'count')} rounds against out-of-core's "
                         f"{format_number(rounds_out, 'count')} (median)")
                if rounds_in < rounds_out and method in ("bmf", "tpe"):
                    text += ", as an update is visible to later edges within the same round"
            out.append(Observation(graph, "sync", text + "."))
    return out


def ordering_effect(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """Per variant run in several orderings: best time per ordering, fastest vs slowest."""
    out = []
    for variant in variants(frame):
        orderings = orderings_run(frame, graph, variant)
        if len(orderings) < 2:
            continue
        best = {}
        for ordering in orderings:
            clean = clean_cells(cell_grid(frame, graph, variant, ordering, "computation_ms"))
            if clean:
                config = min(clean, key=lambda c: clean[c].median)
                best[ordering] = (config, clean[config].median)
        missing = [o for o in orderings if o not in best]
        if len(best) < 2:
            out.append(Observation(graph, "ordering", f"On {graph}, the effect of edge ordering on "
                                   f"{variant_name(variant)} cannot be judged: too few orderings ran correctly."))
            continue
        fast = min(best, key=lambda o: best[o][1])
        slow = max(best, key=lambda o: best[o][1])
        others = [o for o in best if o not in (fast, slow)]
        text = (f"On {graph}, {variant_name(variant)} is fastest {ordering_phrase(fast)} "
                f"({ms(best[fast][1])} at {best[fast][0]}), {times(best[slow][1] / best[fast][1])} faster than "
                f"{ordering_phrase(slow)} ({ms(best[slow][1])} at {best[slow][0]})")
        for o in others:
            text += f"; {ordering_phrase(o)}: {ms(best[o][1])} at {best[o][0]}"
        if missing:
            text += f" ({', '.join(missing)} order: no configuration ran correctly)"
        out.append(Observation(graph, "ordering", text + "."))
    return out


def segscan_vs_bmf(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """segscan against bmf out-of-core on the same (destination) ordering."""
    seg = best_clean(frame, graph, "segscan")
    if seg is None:
        if len(select(frame, graph=graph, variant="segscan")):
            return [Observation(graph, "segscan", f"On {graph}, segscan cannot be compared with bmf: none of its "
                                "configurations ran correctly in every repetition.")]
        return []
    ordering, config, cell = seg
    clean = clean_cells(cell_grid(frame, graph, BASELINE, ordering, "computation_ms"))
    if not clean:
        return [Observation(graph, "segscan", f"On {graph}, segscan ({ms(cell.median)} at {config}) cannot be "
                            f"compared with bmf out-of-core {ordering_phrase(ordering)}: no correct bmf runs.")]
    base = min(clean, key=lambda c: clean[c].median)
    ratio = clean[base].median / cell.median
    verb = f"{times(ratio)} faster" if ratio >= 1 else f"{times(1 / ratio)} slower"
    return [Observation(graph, "segscan", f"On {graph}, segscan ({ms(cell.median)} at {config}) is {verb} than "
                        f"bmf out-of-core {ordering_phrase(ordering)} ({ms(clean[base].median)} at {base}).")]


def filtering_share(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """tpe: the filtering stage's share of computation + filtering, and tpe vs bmf on computation alone."""
    out = []
    frame = with_total(frame)
    for variant in ("tpe outcore", "tpe incore"):
        for ordering in orderings_run(frame, graph, variant):
            comp = cell_grid(frame, graph, variant, ordering, "computation_ms")
            filt = cell_grid(frame, graph, variant, ordering, "filtering_ms")
            both = {c: (comp[c].median, filt[c].median) for c in comp if comp[c].clean and filt[c].clean}
            who = f"{variant_name(variant)} {ordering_phrase(ordering)}"
            if not both:
                out.append(Observation(graph, "filtering", f"On {graph}, the filtering share of {who} cannot be "
                                       "given: no configuration ran correctly in every repetition."))
                continue
            best = min(both, key=lambda c: sum(both[c]))
            c_ms, f_ms = both[best]
            shares = [f / (c + f) * 100 for c, f in both.values() if c + f > 0]
            text = (f"On {graph}, {who} spends {f_ms / (c_ms + f_ms) * 100:.1f}% of its time filtering at its "
                    f"fastest configuration {best} (filtering {ms(f_ms)}, computation {ms(c_ms)})")
            if len(shares) > 1:
                text += f"; across {len(shares)} configurations the share ranges {min(shares):.1f}–{max(shares):.1f}%"
            sync = variant.split(" ")[1]
            bmf = clean_cells(cell_grid(frame, graph, f"bmf {sync}", ordering, "computation_ms"))
            if best in bmf:
                text += (f". Its computation stage alone is {times(bmf[best].median / c_ms)} faster than bmf "
                         f"{SYNC_NAMES[sync]} at {best} ({ms(bmf[best].median)}); with filtering, "
                         f"{times(bmf[best].median / (c_ms + f_ms))}")
            out.append(Observation(graph, "filtering", text + "."))
    return out


def work_efficiency(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """Edges relaxed per graph edge: tpe and opt against bmf with the same sync."""
    out = []
    frame = frame.assign(per_edge=frame["edges_processed"].astype("float64")
                         / frame["graph_edges"].astype("float64"),
                         scanned_per_edge=frame["edges_filtered"].astype("float64")
                         / frame["graph_edges"].astype("float64"))
    for method in ("tpe", "opt"):
        for sync in ("outcore", "incore"):
            variant, base = f"{method} {sync}", f"bmf {sync}"
            ordering = work_ordering(frame, graph, variant)
            if ordering is None:
                continue
            per_edge = median_work(frame, graph, variant, ordering, "per_edge")
            rounds = median_work(frame, graph, variant, ordering, "rounds")
            base_per_edge = median_work(frame, graph, base, ordering, "per_edge")
            base_rounds = median_work(frame, graph, base, ordering, "rounds")
            if per_edge is None or rounds is None:
                continue
            text = (f"On {graph}, {variant_name(variant)} {ordering_phrase(ordering)} relaxes "
                    f"{format_number(per_edge, 'ratio')} edges per graph edge in {format_number(rounds, 'count')} "
                    "rounds (median over correct runs)")
            if base_per_edge and base_rounds:
                text += (f", against {format_number(base_per_edge, 'ratio')} per graph edge in "
                         f"{format_number(base_rounds, 'count')} rounds for {variant_name(base)}: "
                         f"{times(base_per_edge / per_edge)} less work")
            else:
                text += f"; {variant_name(base)} has no correct runs {ordering_phrase(ordering)} to compare with"
            scanned = median_work(frame, graph, variant, ordering, "scanned_per_edge")
            if scanned:
                text += f"; its filtering stage scans {format_number(scanned, 'ratio')} edges per graph edge"
            out.append(Observation(graph, "work", text + "."))
    return out


def opt_speedup(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """opt's best against bmf out-of-core's best (any ordering, any configuration)."""
    base = best_clean(frame, graph, BASELINE)
    opts = [v for v in variants(frame) if v.startswith("opt")]
    if not len(select(frame, graph=graph, method="opt")):
        return [Observation(graph, "opt", f"On {graph}, opt was not run, so its speed-up over bmf cannot be given.")]
    out = []
    for variant in opts:
        best = best_clean(frame, graph, variant)
        if not len(select(frame, graph=graph, variant=variant)):
            continue
        if best is None or base is None:
            who = variant_name(variant) if best is None else "bmf out-of-core"
            out.append(Observation(graph, "opt", f"On {graph}, the speed-up of {variant_name(variant)} over bmf "
                                   f"cannot be given: {who} has no configuration that ran correctly in every "
                                   "repetition."))
            continue
        ordering, config, cell = best
        ratio = base[2].median / cell.median
        verb = f"{times(ratio)} faster" if ratio >= 1 else f"{times(1 / ratio)} slower"
        out.append(Observation(graph, "opt", f"On {graph}, {variant_name(variant)} ({ms(cell.median)} at {config}, "
                               f"{ordering} order) is {verb} than the best bmf out-of-core setting "
                               f"({ms(base[2].median)} at {base[1]}, {base[0]} order)."))
    return out


def failures(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """Every setting with failed repetitions, said once, so readers know what was left out."""
    out = []
    runs = select(frame, graph=graph)
    for (variant, ordering, config), group in runs.groupby(["variant", "ordering", "config"], sort=False):
        bad = group[group["status"] != "ok"]
        if not len(bad):
            continue
        from .cells import summarize
        cell = summarize(group, "computation_ms")
        out.append(Observation(graph, "failures",
                               f"On {graph}, {variant_name(variant)} {ordering_phrase(ordering)} at {config} did not "
                               f"run correctly in {len(bad)} of {len(group)} repetitions ({cell.failure_text}); "
                               "this setting is left out of every comparison."))
    return out


TOPICS = (fastest_configuration, incore_vs_outcore, ordering_effect, segscan_vs_bmf, filtering_share,
          work_efficiency, opt_speedup, failures)


def observe(frame: pd.DataFrame) -> list[Observation]:
    """All observations, graph by graph, topic by topic."""
    return [obs for graph in graphs(frame) for topic in TOPICS for obs in topic(frame, graph)]
