"""Load times of ``./sssp``'s input path: text parse, and cached load (``make bench`` only).

The stand-ins' SNAP text (the files the wall-time table runs on) is parsed without the
cache once, then loaded from the parse cache (median of 5). Issue 2's bars: roadNet-CA size
parsed in < 2 s and loaded cached in < 0.2 s; LiveJournal size parsed in < 25 s.
"""
from __future__ import annotations

import time

from .common import median, print_table

BARS = {"road": (2.0, 0.2), "lj": (25.0, None)}


def bench(settings, budget, record) -> None:
    from sssp_common.loader import load_graph

    from . import graphs

    rows = []
    for key, (parse_bar, cached_bar) in BARS.items():
        spec = graphs.spec(settings.scale, key)
        text = graphs.path(settings.scale, key, "txt")
        size_mb = text.stat().st_size / 1e6
        if not budget.allows(size_mb / 110 + 1.0, f"load times of the {spec.label}"):
            continue
        started = time.perf_counter()
        graph = load_graph(text, cache=False)
        parse_s = time.perf_counter() - started
        load_graph(text)  # the cache exists after the preparation; this makes sure
        cached = []
        for _ in range(5):
            started = time.perf_counter()
            load_graph(text)
            cached.append(time.perf_counter() - started)
        cached_s = median(cached)
        verdict = ("met" if parse_s < parse_bar else "MISSED") + f" (< {parse_bar:g} s)"
        if cached_bar is not None:
            verdict += f"; cached {'met' if cached_s < cached_bar else 'MISSED'} (< {cached_bar:g} s)"
        record("load", graph=key, label=spec.label, edges=graph.m, megabytes=round(size_mb, 1), parse_s=parse_s,
               cached_s=cached_s, parse_bar_s=parse_bar, cached_bar_s=cached_bar)
        rows.append([spec.label, f"{graph.m:,}", f"{size_mb:,.0f}", parse_s, cached_s, verdict])
        print(f"  {spec.label}: parse {parse_s:.2f} s, cached {cached_s:.3f} s", flush=True)
    print_table("Loading ./sssp's input (seconds)",
                ["graph", "edges", "MB", "text parse s", "cached load s", "bars"], rows)
