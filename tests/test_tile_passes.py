"""opt_tiles.cu's pull passes (tile_fixpoint_pull), replayed thread by thread in random interleavings.

A model of one block on one tile, as tests/test_tile_steps.py is for the push steps: thread i
owns vertex i and runs the kernel's pass loop line for line (its distance in a register, each
in-neighbour's distance read on its own, so a read may be stale; a store when its distance
drops; ``pull_passes`` passes, then ``__syncthreads_or`` of "I stored something"). The
scheduler picks the next thread at random, so threads drift any number of passes apart, as warps
do. Checked: activations repeated as the kernel repeats them (a capped one queued again with the
vertices stored in its last interval dirty, splits raising the threshold) give Dijkstra's
distances; and the model fails when that rule for the last interval is dropped, so it can fail.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from tests.test_tile_steps import INF, dijkstra, random_graph


def activation(sd, dirty, T, into, max_passes, pull_passes, rng, keep_last=True):
    """One tile activation (every vertex a thread); returns whether the tile queues itself again."""
    n = len(sd)
    or_votes = {}

    def thread(i):
        mine, first, was_dirty = int(sd[i]), int(sd[i]), bool(dirty[i])
        dirty[i] = False
        work = yield ("or", was_dirty and mine < T)  # the barrier after the loads
        passes, changed = 0, False
        while work:
            if passes >= max_passes:
                break
            changed = False
            for _ in range(pull_passes):
                best = mine
                for tail, w in into[i]:
                    yield
                    du = int(sd[tail])  # whatever the owner stored last
                    if du < T and du + w < best:
                        best = du + w
                if best < mine:
                    mine = best
                    sd[i] = best
                    changed = True
                yield
            passes += pull_passes
            work = yield ("or", changed)
        touched = was_dirty or mine < first
        left = bool(work) and changed and keep_last
        if left or (touched and not mine < T):
            dirty[i] = True
        yield ("done", bool(work))

    running = {i: thread(i) for i in range(n)}
    pending = {i: None for i in range(n)}  # what each thread gets back at its next step
    finals = {}
    while running:
        waiting = [i for i in running if i in or_votes]
        ready = [i for i in running if i not in or_votes]
        if not ready:  # everyone is at the barrier: the OR goes back to all
            result = any(or_votes.values())
            or_votes.clear()
            for i in running:
                pending[i] = result
            continue
        i = rng.choice(ready)
        said = running[i].send(pending[i]) if pending[i] is not None else next(running[i])
        pending[i] = None
        if isinstance(said, tuple) and said[0] == "or":
            or_votes[i] = said[1]
        elif isinstance(said, tuple) and said[0] == "done":
            finals[i] = said[1]
            del running[i]
            assert not waiting, "a thread left while others wait at a barrier"
    assert len(set(finals.values())) <= 1, "threads disagree on whether the tile goes again"
    return any(finals.values())


def solve(adj, n, delta, max_passes, pull_passes, rng, keep_last=True):
    into = [[] for _ in range(n)]
    for u, edges in enumerate(adj):
        for h, w in edges:
            into[h].append((u, w))
    sd = np.full(n, INF, dtype=np.int64)
    sd[0] = 0
    dirty = np.zeros(n, bool)
    dirty[0] = True
    T = min(delta, INF)
    for _ in range(100000):
        if activation(sd, dirty, T, into, max_passes, pull_passes, rng, keep_last):
            continue  # capped: the tile queued itself again
        if not dirty.any():
            return sd.tolist()
        T = min(int(sd[dirty].min()) + delta, INF)  # a split
    raise AssertionError("no convergence")


@pytest.mark.parametrize("seed", range(4))
def test_passes_in_any_interleaving_give_dijkstra(seed):
    rng = random.Random(seed)
    for _ in range(60):
        n = rng.randint(2, 40)
        adj = random_graph(rng, n)
        delta = rng.choice([1, 3, 10, INF])
        cap, per_check = rng.choice([1, 2, 5, 10**6]), rng.choice([1, 2, 8])
        assert solve(adj, n, delta, cap, per_check, rng) == dijkstra(adj, n)


def test_dropping_the_last_interval_is_caught():
    """A capped activation that forgets the vertices stored in its last interval loses news no
    neighbour has read yet: the model sees wrong distances."""
    rng = random.Random(1)
    wrong = 0
    for _ in range(200):
        n = rng.randint(5, 30)
        adj = random_graph(rng, n)
        if solve(adj, n, INF, 1, 1, rng, keep_last=False) != dijkstra(adj, n):
            wrong += 1
    assert wrong > 0
