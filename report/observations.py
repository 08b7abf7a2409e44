"""Sentences a student would write, generated from the same cells as the tables.

Why generated: the spec asks for data analysis; sentences written from the table
cells cannot drift from them. Rules (docs in report/compare.py and report/cells.py):
- only settings whose every repetition was ok are compared; failed ones are named once;
- one setting is called faster than another only when their ranges do not overlap
  (compare.compare); otherwise the sentence says "within noise";
- nothing is said about a knob the method or the device ignores: the numpy fallback
  runs no GPU grid (no configuration claims on the CPU), and there it runs segscan as
  plain bmf and opt the same way for both syncs; opt ignores -bcount (its configurations
  are compared by block size only);
- every candidate gets an effect size (the ratio of medians); a graph shows a few per
  question of the spec, called differences first, largest first.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .cells import Cell, format_number, summarize
from .compare import FASTER, compare, span, versus
from .tables import (BASELINE, ORDER_SHORT, best_clean, cell_grid, graphs, on_cpu, orderings_of, select,
                     variant_name, variants, with_total, work_values)

TOPIC_TITLES = {"device": "What these numbers are", "configuration": "Block configuration",
                "ordering": "Edge ordering", "sync": "In-core vs out-of-core",
                "segscan": "Shared-memory segmented scan", "filtering": "tpe: filtering vs computation",
                "work": "Work efficiency", "opt": "opt vs bmf", "papers": "The seed papers' methods vs bmf",
                "failures": "Left out (failed or outlying runs)"}
TOPIC_ORDER = tuple(TOPIC_TITLES)
PER_TOPIC = {"configuration": 2, "ordering": 2, "sync": 2, "filtering": 2, "work": 2, "papers": 3}
ORDER_PHRASES = {"given": "edges as given", "source": "edges sorted by source",
                 "destination": "edges sorted by destination"}


@dataclass(frozen=True)
class Observation:
    graph: str
    topic: str
    text: str
    effect: float = 0.0          # ratio of medians (>= 1) or another size; larger = more notable
    verdict: str = "fact"        # 'faster', 'noise', 'too few', 'fact', 'cannot'
    key: tuple = ()              # what was compared, stable across reruns
    winner: tuple = ()           # for 'faster': the ids of the side that won (tied leaders together)
    loser: tuple = ()

    @property
    def topic_title(self) -> str:
        return TOPIC_TITLES.get(self.topic, self.topic)

    @property
    def rank(self) -> tuple:
        """Sort key: called differences, then facts, then noise; larger effects first."""
        order = {"faster": 0, "fact": 1, "noise": 2, "too few": 3, "cannot": 4}
        return (order.get(self.verdict, 5), -self.effect)


def ordering_phrase(ordering: str) -> str:
    return ORDER_PHRASES.get(ordering, f"{ordering} edge order")


def clean(grid: dict[str, Cell]) -> dict[str, Cell]:
    return {config: cell for config, cell in grid.items() if cell.clean}


def pair(graph: str, topic: str, key: tuple, first: tuple, second: tuple, prefix: str, suffix: str = "",
         unit: str = "ms") -> Observation:
    """An observation comparing two clean cells, each side (id, display name, Cell); which is
    faster is decided here, by median and the noise rule."""
    if (second[2].median or 0) < (first[2].median or 0):
        first, second = second, first
    (fast_id, fast_name, fast), (slow_id, slow_name, slow) = first, second
    verdict = compare(fast, slow)
    text = f"{prefix}{versus(verdict, fast_name, fast, slow_name, slow, unit)}{suffix}."
    called = verdict.called
    as_ids = lambda side: tuple(side) if isinstance(side, tuple) else (side,)  # noqa: E731
    return Observation(graph, topic, text, verdict.ratio, verdict.kind, key, as_ids(fast_id) if called else (),
                       as_ids(slow_id) if called else ())


def extremes(cells: dict[str, Cell], name) -> tuple[tuple, tuple]:
    """((ids, name, cell) of the fastest, same of the slowest) among several settings. Settings
    within noise of the fastest that are themselves clear of the slowest are named with it as
    tied winners (so a rerun that swaps two equal settings does not contradict the sentence);
    every winner named is separated from the slowest by the noise rule on its own."""
    order = sorted(cells, key=lambda k: (cells[k].median, k))
    fast, slow = order[0], order[-1]
    ties = [k for k in order[1:-1] if compare(cells[fast], cells[k]).kind != FASTER
            and compare(cells[k], cells[slow]).called] if compare(cells[fast], cells[slow]).called else []
    names = [name(k) for k in [fast] + ties]
    label = names[0] if not ties else f"{', '.join(names[:-1])} and {names[-1]} (tied)"
    return ((fast, *ties), label, cells[fast]), ((slow,), name(slow), cells[slow])


# ---- one function per question of the spec ---------------------------------------------------

def device_note(frame: pd.DataFrame, graph: str) -> list[Observation]:
    if not on_cpu(frame, graph):
        return []
    return [Observation(graph, "device", "These runs used the numpy CPU fallback, not a GPU: it simulates the "
                        "block configuration (in-core only the warp count matters) and runs segscan as plain bmf "
                        "and opt alike for both syncs, so this report makes no claim about configurations, segscan "
                        "or opt's sync; times are numpy's, not a GPU's.", 0.0, "fact", ("device",))]


def configuration(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """Per variant and ordering: fastest vs slowest configuration (opt: block sizes only)."""
    if on_cpu(frame, graph):
        return []
    out = []
    for variant in variants(frame):
        for ordering in orderings_of(frame, graph, variant):
            grid = clean(cell_grid(frame, graph, variant, ordering, "computation_ms"))
            if len(grid) < 2:
                continue
            opt = variant.startswith("opt")
            name = (lambda c: f"block size {c.split('×')[0]}") if opt else (lambda c: c)
            fast, slow = extremes(grid, name)
            who = f"On {graph}, {variant_name(variant)} ({ordering_phrase(ordering)}): "
            tail = " (opt sizes its grid itself; -bcount is ignored)" if opt else ""
            out.append(pair(graph, "configuration", ("configuration", variant, ordering), fast, slow,
                            who + "computation kernel time, fastest against slowest configuration: ", tail))
    return out


def ordering(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """Per variant run in several orderings: its best time per ordering, fastest vs slowest."""
    out = []
    for variant in variants(frame):
        best = {}
        for order in orderings_of(frame, graph, variant):
            grid = clean(cell_grid(frame, graph, variant, order, "computation_ms"))
            if grid:
                config = min(grid, key=lambda c: (grid[c].median, c))
                best[order] = grid[config]
        if len(best) < 2:
            continue
        fast, slow = extremes(best, ordering_phrase)
        out.append(pair(graph, "ordering", ("ordering", variant), fast, slow,
                        f"On {graph}, {variant_name(variant)} at its best configuration, computation kernel "
                        "time: "))
    return out


def rounds_of(frame, graph, variant, order) -> float | None:
    runs = select(frame, graph=graph, variant=variant, ordering=order)
    values = pd.to_numeric(runs.loc[runs["status"] == "ok", "rounds"], errors="coerce").dropna()
    return float(values.median()) if len(values) else None


def sync(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """Per method with both syncs and ordering: best in-core vs best out-of-core, with their rounds."""
    out = []
    cpu = on_cpu(frame, graph)
    methods = dict.fromkeys(v.split(" ")[0] for v in variants(frame) if " " in v)
    for method in methods:
        if cpu and method == "opt":
            continue
        outcore, incore = f"{method} outcore", f"{method} incore"
        for order in orderings_of(frame, graph, outcore):
            if order not in orderings_of(frame, graph, incore):
                continue
            best_out = best_clean(select(frame, ordering=order), graph, outcore)
            best_in = best_clean(select(frame, ordering=order), graph, incore)
            if best_out is None or best_in is None:
                continue
            suffix = ""
            r_out, r_in = rounds_of(frame, graph, outcore, order), rounds_of(frame, graph, incore, order)
            if r_out and r_in:
                suffix = (f"; in-core needs {format_number(r_in, 'count')} rounds against out-of-core's "
                          f"{format_number(r_out, 'count')}")
                if r_in < r_out and method in ("bmf", "tpe"):
                    suffix += ", since an update is seen by later edges of the same round"
            out.append(pair(graph, "sync", ("sync", method, order), ("incore", f"in-core ({best_in[1]})", best_in[2]),
                            ("outcore", f"out-of-core ({best_out[1]})", best_out[2]),
                            f"On {graph}, {method} with {ordering_phrase(order)}, computation kernel time: ",
                            suffix))
    return out


def segscan(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """segscan against bmf out-of-core on destination-sorted edges (GPU only)."""
    if on_cpu(frame, graph):
        return []
    seg = best_clean(frame, graph, "segscan")
    if seg is None:
        return []
    base = best_clean(select(frame, ordering=seg[0]), graph, BASELINE)
    if base is None:
        return []
    return [pair(graph, "segscan", ("segscan",), ("segscan", f"segscan ({seg[1]})", seg[2]),
                 (BASELINE, f"bmf out-of-core ({base[1]})", base[2]),
                 f"On {graph}, with {ordering_phrase(seg[0])}, computation kernel time: ")]


def filtering(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """tpe: filtering against computation at its best setting, and tpe (both stages) against bmf."""
    out = []
    totals = with_total(frame)
    for variant in [v for v in variants(frame) if v.startswith("tpe")]:
        best = best_clean(totals, graph, variant, "total_ms")
        if best is None:
            continue
        order, config, total = best
        runs = select(frame, graph=graph, variant=variant, ordering=order, config=config)
        comp, filt = summarize(runs, "computation_ms"), summarize(runs, "filtering_ms")
        if comp.clean and filt.clean and comp.median and filt.median:
            share = filt.median / (comp.median + filt.median) * 100
            note = pair(graph, "filtering", ("filtering-share", variant), ("filtering", "", filt),
                        ("computation", "", comp), "")
            who = f"On {graph}, {variant_name(variant)} at its best setting ({config}, {ordering_phrase(order)})"
            figures = f"filtering {span(filt)}, computation {span(comp)}"
            if note.verdict == FASTER:
                longer, shorter = note.loser[0], note.winner[0]
                text = (f"{who} spends {share:.0f}% of its kernel time filtering ({figures}): {longer} takes "
                        f"{format_number(note.effect, 'ratio')}× as long as {shorter}.")
            else:
                text = f"{who}: filtering and computation take about as long, within noise ({figures})."
            out.append(Observation(graph, "filtering", text, note.effect, note.verdict, note.key, note.winner,
                                   note.loser))
        method, _, sync_mode = variant.partition(" ")
        base = best_clean(select(totals, ordering=order), graph, f"bmf {sync_mode}", "total_ms")
        if base is not None:
            out.append(pair(graph, "filtering", ("tpe-vs-bmf", variant),
                            (variant, f"{variant_name(variant)} with filtering ({config})", total),
                            (f"bmf {sync_mode}", f"bmf {variant_name(variant).split(' ', 1)[1]} ({base[1]})", base[2]),
                            f"On {graph}, {ordering_phrase(order)}, best settings, total kernel time "
                            "(computation + filtering): "))
    return out


def per_edge(frame: pd.DataFrame) -> pd.DataFrame:
    """Edges relaxed, scanned by filtering, and both together, each per graph edge."""
    frame = work_values(frame)
    scanned = frame["filtered_per_edge"]
    return frame.assign(scanned_per_edge=scanned, read_per_edge=frame["processed_per_edge"] + scanned)


def measure_clause(mine: Cell, base: Cell, fewer: str, more: str, same: str) -> tuple[str, object]:
    """(': 43.0× fewer relaxations' or ': the same ... within the spread', the verdict) for two
    per-edge cells where lower is better."""
    verdict = compare(mine, base) if mine.median <= base.median else compare(base, mine)
    if verdict.kind != FASTER:
        return same, verdict
    ratio = base.median / mine.median
    return f"{format_number(max(ratio, 1 / ratio), 'ratio')}× {fewer if ratio >= 1 else more}", verdict


def work(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """Work of tpe and opt against bmf with the same sync, in counts per graph edge, each measure
    named: edges relaxed, edges scanned by filtering, and the two together (edges read). Fewer
    relaxations is not less work when the filtering scans every edge every round: the sentence
    says both, and calls it less work only when the edges read in all are fewer."""
    out = []
    frame = per_edge(frame)
    for variant in variants(frame):
        method, _, sync_mode = variant.partition(" ")
        base_variant = f"bmf {sync_mode}" if sync_mode else BASELINE
        if method in ("bmf", "segscan") or variant == base_variant:
            continue
        runs = select(frame, graph=graph, variant=variant)
        orders = [o for o in orderings_of(frame, graph, variant) if o in orderings_of(frame, graph, base_variant)]
        if not len(runs) or not orders:
            continue
        order = "source" if "source" in orders else orders[0]
        mine_runs, base_runs = select(runs, ordering=order), select(frame, graph=graph, variant=base_variant,
                                                                    ordering=order)
        mine, base = (summarize(r, "processed_per_edge", "ratio") for r in (mine_runs, base_runs))
        if not (mine.clean and base.clean and mine.median and base.median):
            continue
        relaxed, verdict = measure_clause(mine, base, "fewer relaxations", "more relaxations",
                                          "as many relaxations within the spread over configurations and repetitions")
        rounds = f" in {format_number(rounds_of(frame, graph, variant, order) or 0, 'count')} rounds"
        base_name = variant_name(base_variant)
        text = (f"On {graph}, {variant_name(variant)} ({ordering_phrase(order)}) relaxes {span(mine, 'edges')} "
                f"per graph edge{rounds}, against {span(base, '')} for {base_name}: {relaxed}")
        scan_mine, scan_base = (summarize(r, "scanned_per_edge", "ratio") for r in (mine_runs, base_runs))
        read_mine, read_base = (summarize(r, "read_per_edge", "ratio") for r in (mine_runs, base_runs))
        if not (scan_mine.clean and scan_base.clean):
            text += "; its edges scanned by filtering were not recorded, so nothing is said of its work in all"
        elif not (scan_mine.median or scan_base.median):
            text += " (neither scans edges to filter, so this is the work in edges read)"
        else:
            theirs = span(scan_base, "") if scan_base.median else "none"
            read, _ = measure_clause(read_mine, read_base, "less work", "more work",
                                     "no less work within the spread")
            but = "but " if relaxed.endswith("fewer relaxations") and not read.endswith("less work") else ""
            text += (f"; {but}its filtering scans {span(scan_mine, 'edges')} per graph edge ({base_name}: {theirs}), "
                     f"so edges read (relaxed + scanned) per graph edge: {format_number(read_mine.median, 'ratio')} "
                     f"against {format_number(read_base.median, 'ratio')}: {read}")
        ratio = base.median / mine.median
        less, more = (variant, base_variant) if ratio >= 1 else (base_variant, variant)
        called = verdict.kind == FASTER
        out.append(Observation(graph, "work", text + ".", max(ratio, 1 / ratio), verdict.kind, ("work", variant),
                               (less,) if called else (), (more,) if called else ()))
    return out


def versus_bmf(frame: pd.DataFrame, graph: str, topic: str, chosen) -> list[Observation]:
    """Best total time of each chosen variant against the best bmf out-of-core setting."""
    totals = with_total(frame)
    base = best_clean(totals, graph, BASELINE, "total_ms")
    out = []
    for variant in [v for v in variants(frame) if chosen(v)]:
        if cpu_ignores_sync(frame, graph, variant):
            continue
        best = best_clean(totals, graph, variant, "total_ms")
        if best is None or base is None:
            continue
        order, config, cell = best
        out.append(pair(graph, topic, (topic, variant),
                        (variant, f"{variant_name(variant)} ({config}, {ORDER_SHORT.get(order, order)})", cell),
                        (BASELINE, f"bmf out-of-core ({base[1]}, {ORDER_SHORT.get(base[0], base[0])})", base[2]),
                        f"On {graph}, best settings, total kernel time (computation + filtering): "))
    return out


def cpu_ignores_sync(frame, graph, variant) -> bool:
    """On the CPU, opt runs alike for both syncs: one of the two says it all."""
    return on_cpu(frame, graph) and variant == "opt incore"


def opt(frame: pd.DataFrame, graph: str) -> list[Observation]:
    return versus_bmf(frame, graph, "opt", lambda v: v.startswith("opt"))


def papers(frame: pd.DataFrame, graph: str) -> list[Observation]:
    from sssp_common.vocabulary import PAPER_METHODS
    return versus_bmf(frame, graph, "papers", lambda v: v.split(" ")[0] in PAPER_METHODS)


def left_out(frame: pd.DataFrame, graph: str) -> list[Observation]:
    """One sentence naming the settings with failed repetitions, one for outliers."""
    runs = select(frame, graph=graph)
    bad = runs[runs["status"] != "ok"]
    out = []
    if len(bad):
        settings = list(dict.fromkeys(f"{variant_name(v)} {ORDER_SHORT.get(o, o)} {c}"
                                      for v, o, c in zip(bad["variant"], bad["ordering"], bad["config"])))
        shown = ", ".join(settings[:4]) + (f" and {len(settings) - 4} more" if len(settings) > 4 else "")
        statuses = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in bad["status"].value_counts().items())
        out.append(Observation(graph, "failures", f"On {graph}, {len(settings)} setting(s) had runs that failed "
                               f"({statuses}) and are left out of every comparison: {shown}.", float(len(bad)),
                               "fact", ("failures",)))
    outliers = 0
    ok = runs[runs["status"] == "ok"]
    for _, group in ok.groupby(["variant", "ordering", "config"], sort=False):
        outliers += len(summarize(group, "computation_ms").outliers)
    if outliers:
        out.append(Observation(graph, "failures", f"On {graph}, {outliers} repetition(s) were outliers (more than 3 "
                               "MADs from their setting's median) and are not used; the Outliers table lists them.",
                               float(outliers), "fact", ("outliers",)))
    return out


TOPICS = (device_note, configuration, ordering, sync, segscan, filtering, work, opt, papers, left_out)


def candidates(frame: pd.DataFrame) -> list[Observation]:
    """Every observation the rules allow, before choosing the few to show (used by rerun checks)."""
    return [o for graph in graphs(frame) for topic in TOPICS for o in topic(frame, graph)]


def select_few(observations: list[Observation]) -> list[Observation]:
    """Per graph and question: the strongest few (PER_TOPIC, default 1), spec order of questions."""
    chosen = []
    for graph in dict.fromkeys(o.graph for o in observations):
        for topic in TOPIC_ORDER:
            group = sorted((o for o in observations if o.graph == graph and o.topic == topic), key=lambda o: o.rank)
            limit = 2 if topic == "failures" else PER_TOPIC.get(topic, 1)
            # the strongest of each kind of comparison first (tpe: its share, then tpe vs bmf), then by rank
            firsts = list({o.key[:1]: o for o in reversed(group)}.values())
            picked = sorted(firsts, key=lambda o: o.rank)[:limit]
            picked += [o for o in group if o not in picked][:limit - len(picked)]
            chosen += sorted(picked, key=lambda o: o.rank)
    return chosen


def observe(frame: pd.DataFrame) -> list[Observation]:
    """The observations the report shows, graph by graph, question by question."""
    return select_few(candidates(frame))


def claims(observations: list[Observation]) -> dict[tuple, tuple[set, set]]:
    """(graph, key...) → (winner ids, loser ids) of every called difference."""
    return {(o.graph,) + o.key: (set(o.winner), set(o.loser)) for o in observations if o.verdict == FASTER}


def flips(first: list[Observation], second: list[Observation]) -> list[str]:
    """Claims of the first set that the second contradicts (one of its losers now beats one of
    its winners on the same question): must be empty for two runs of one sweep."""
    a, b = claims(first), claims(second)
    out = []
    for key, (won, lost) in a.items():
        if key in b and (b[key][0] & lost) and (b[key][1] & won):
            out.append(f"{key}: {sorted(won)} beat {sorted(lost)}, then {sorted(b[key][0])} beat {sorted(b[key][1])}")
    return out
