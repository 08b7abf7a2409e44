"""Where a sweep's time went: kernels, process start-up, the rest of the programs' runs,
checking, and everything else (graphs, references, waiting). Pure: rows in, one line out.

Why: on a GPU a sweep of one fresh process per cell is ~99 % start-up (issue 25); a user
who sees only "9 min" cannot tell a slow program from a slow harness. The split is of busy
time summed over the workers, so with several workers it may exceed the wall time.

Sources, all recorded per row: `wall_s` (the program's run, as the harness timed it), the
kernel times it printed, `startup_s` (the start-up and device stages of this project's
`wall:` line; None for programs that print none) and, for the kept ./sssp, the seconds its
server took to start (`protections.warm.server_start_s`, once per server); checking is the
harness's own time per run (total minus the program's), less those server starts.
"""
from __future__ import annotations


def _seconds(value: float) -> str:
    if value >= 60:
        minutes, seconds = divmod(int(round(value)), 60)
        return f"{minutes}:{seconds:02d}"
    return f"{value:.1f} s" if value >= 0.1 else f"{value * 1000:.0f} ms"


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole > 0 else "-"


def server_start(row: dict) -> float:
    warm = (row.get("protections") or {}).get("warm") or {}
    return float(warm.get("server_start_s") or 0.0)


def time_split(rows: list[dict], overheads: list[float], wall_s: float) -> str:
    """One line (or two) for the sweep's summary; '' when nothing ran."""
    if not rows:
        return ""
    programs = sum(row.get("wall_s") or 0.0 for row in rows)
    kernels = sum(((row.get("computation_ms") or 0.0) + (row.get("filtering_ms") or 0.0)) / 1000 for row in rows)
    servers = sum(server_start(row) for row in rows)
    warm = sum(1 for row in rows if (row.get("protections") or {}).get("warm"))
    # the program dates its start from the process's birth (clock ticks), the harness from its
    # own launch: a start-up is never more than the run it is part of
    known = [min(row["startup_s"], row.get("wall_s") or 0.0) for row in rows if row.get("startup_s") is not None]
    checking = max(0.0, sum(overheads) - servers)
    busy = programs + sum(overheads)
    startup = sum(known) + servers
    startup_text = (f"start-up {_seconds(startup)} ({_share(startup, busy)})" if known or servers else
                    "start-up unknown (the program prints no wall: line)")
    rest = max(0.0, programs - kernels - sum(known))
    others = max(0.0, wall_s - busy)
    how = (f"{warm} of {len(rows)} runs in a kept ./sssp, {_seconds(servers)} to start it" if warm
           else "one process per run")
    return (f"where the time went ({_seconds(wall_s)} wall, {_seconds(busy)} busy; {how}):\n"
            f"  kernels {_seconds(kernels)} ({_share(kernels, busy)}; {_share(kernels, programs)} of the programs' "
            f"{_seconds(programs)}), {startup_text}, the programs' other work {_seconds(rest)} "
            f"({_share(rest, busy)}: load, setup, output), checking {_seconds(checking)} ({_share(checking, busy)}), "
            f"outside the runs {_seconds(others)} (graphs, references)")
