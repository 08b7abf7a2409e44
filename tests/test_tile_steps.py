"""opt_tiles.cu's worklist steps (tile_fixpoint), replayed thread by thread in random interleavings.

A model of one block on one tile: every "thread" is a generator that runs the kernel's step
loop line for line (the flag arrays cur/nxt swapped per thread, pend, expd, the triple-buffered
s_any flag that thread 0 clears, shared atomicMin) and yields wherever another thread could
run in between; ``__syncthreads`` waits for every thread. The scheduler picks the next thread
at random. Checked: every thread leaves with the same worklist (a disagreement would hang the
block on the GPU), and activations repeated as the kernel repeats them (leftovers queued
again, splits raising the threshold) give Dijkstra's distances. The kernel itself runs in
tests/test_tiles.py's GPU tests; this pins the protocol of its steps where no GPU is.
"""
from __future__ import annotations

import heapq
import random

import numpy as np
import pytest

INF = 2**31 - 1


def activation(sd, dirty, T, adj, threads, max_steps, rng):
    """One tile activation; returns whether worklist entries were left (the step cap)."""
    n = len(sd)
    flags = [np.zeros(n, bool), np.zeros(n, bool)]
    pend = np.zeros(n, bool)
    s_any = [rng.randint(0, 1) for _ in range(3)]  # shared memory starts as garbage ...
    for i in range(n):
        now = bool(dirty[i]) and sd[i] < T
        flags[0][i] = now
        pend[i] = bool(dirty[i]) and not now
        dirty[i] = False
    s_any[0] = 0  # ... except what thread 0 clears before the first barrier
    start = bool(flags[0].any())

    def thread(tid):
        cur, nxt = flags[0], flags[1]
        work, step = start, 0
        while work:
            if step == max_steps:
                break
            slot = step % 3
            if tid == 0:
                s_any[(step + 1) % 3] = 0
            step += 1
            queued = False
            for i in range(tid, n, threads):
                yield
                if not cur[i]:
                    continue
                cur[i] = False
                pend[i] = False
                du = sd[i]
                yield
                for h, w in adj[i]:
                    nd = min(du + w, INF)
                    old = sd[h]
                    if nd < old:  # atomicMin: read and write in one go
                        sd[h] = nd
                    yield
                    if nd < old:
                        if nd < T:
                            nxt[h] = True
                            queued = True
                        else:
                            pend[h] = True
                    yield
            if queued:
                s_any[slot] = 1
            yield "barrier"
            cur, nxt = nxt, cur
            work = s_any[slot]
        yield ("done", cur)

    running = {t: thread(t) for t in range(threads)}
    waiting, finals = set(), {}
    while running:
        t = rng.choice([t for t in running if t not in waiting])
        said = next(running[t])
        if said == "barrier":
            waiting.add(t)
            if waiting == set(running):
                waiting.clear()
        elif isinstance(said, tuple):
            finals[t] = said[1]
            del running[t]
            assert not waiting, "a thread left while others wait at a barrier"
    assert len({id(cur) for cur in finals.values()}) == 1, "threads disagree on the worklist"
    left = next(iter(finals.values()))
    dirty |= left | pend
    return bool(left.any())


def solve(adj, n, delta, threads, max_steps, rng):
    sd = np.full(n, INF, dtype=np.int64)
    sd[0] = 0
    dirty = np.zeros(n, bool)
    dirty[0] = True
    T = min(delta, INF)
    for _ in range(100000):
        if activation(sd, dirty, T, adj, threads, max_steps, rng):
            continue  # the tile queued itself again
        if not dirty.any():
            return sd.tolist()
        T = min(int(sd[dirty].min()) + delta, INF)  # a split
    raise AssertionError("no convergence")


def dijkstra(adj, n):
    dist = [INF] * n
    dist[0] = 0
    heap = [(0, 0)]
    while heap:
        du, u = heapq.heappop(heap)
        if du > dist[u]:
            continue
        for h, w in adj[u]:
            if du + w < dist[h]:
                dist[h] = du + w
                heapq.heappush(heap, (dist[h], h))
    return dist


def random_graph(rng, n, per_vertex=5):
    """Out-adjacency of up to per_vertex * n random edges (loops and repeats included), weights 0..9:
    the graphs of this file's and the other tile protocol models' tests."""
    adj = [[] for _ in range(n)]
    for _ in range(rng.randint(0, per_vertex * n)):
        adj[rng.randrange(n)].append((rng.randrange(n), rng.randint(0, 9)))
    return adj


@pytest.mark.parametrize("seed", range(4))
def test_steps_in_any_interleaving_give_dijkstra(seed):
    rng = random.Random(seed)
    for _ in range(100):
        n = rng.randint(2, 50)
        adj = random_graph(rng, n)
        delta = rng.choice([1, 3, 10, INF])
        threads, cap = rng.choice([1, 2, 3, 8, 32]), rng.choice([1, 2, 5, 10**6])
        assert solve(adj, n, delta, threads, cap, rng) == dijkstra(adj, n)


def test_a_wrong_clear_is_caught():
    """The model notices the race the triple buffer avoids (thread 0 clearing the slot the
    others are still reading)."""
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(activation)).replace(
        "s_any[(step + 1) % 3] = 0", "s_any[(step + 2) % 3] = 0")
    space = {"np": np, "INF": INF}
    exec(source, space)
    rng = random.Random(0)
    with pytest.raises(AssertionError, match="disagree|left while others wait"):
        for _ in range(300):
            n = rng.randint(10, 40)
            adj = [[] for _ in range(n)]
            for _ in range(4 * n):
                adj[rng.randrange(n)].append((rng.randrange(n), rng.randint(0, 9)))
            sd = np.full(n, INF, dtype=np.int64)
            sd[0] = 0
            dirty = np.zeros(n, bool)
            dirty[0] = True
            space["activation"](sd, dirty, INF, adj, 8, 10**6, rng)
