"""opt_tiles.cu's rounds with inboxes, replayed with the activations of a round interleaved at random.

The kernel has one grid barrier a round: the tiles queued for round r are taken by blocks at
once, and each block's write-back relaxes its expanded vertices' boundary edges into the heads'
inboxes (atomicMin), queueing the head's tile for round r + 1, while the blocks of other tiles
are loading, taking their inboxes (atomicExch) and writing back. This model runs those
activations as generators that yield at every global read, write or atomic, so any order of
them across blocks is tried; inside a tile the fixpoint is Jacobi sweeps (the pull passes'
result; tests/test_tile_passes.py interleaves those). Checked: the rounds, splits and inboxes
give Dijkstra's distances on random graphs with random tiles, thresholds and step caps; and two
planted slips (a boundary improvement that queues no tile, an activation that drops what it
takes from an inbox) give wrong ones, so the model can fail.
"""
from __future__ import annotations

import random

import pytest

from tests.test_tile_steps import INF, dijkstra, random_graph


class Model:
    def __init__(self, n, adj, size, delta, cap, rng, queue_news=True, keep_taken=True):
        self.n, self.size, self.delta, self.cap, self.rng = n, size, delta, cap, rng
        self.queue_news, self.keep_taken = queue_news, keep_taken
        self.tile_of = [v // size for v in range(n)]
        self.tiles = (n + size - 1) // size
        self.into = [[] for _ in range(n)]      # intra-tile in-edges
        self.boundary = [[] for _ in range(n)]  # boundary out-edges
        for u, edges in enumerate(adj):
            for h, w in edges:
                (self.into[h] if self.tile_of[u] == self.tile_of[h] else self.boundary[u]).append(
                    (u, w) if self.tile_of[u] == self.tile_of[h] else (h, w))
        self.dist = [INF] * n
        self.inbox = [INF] * n
        self.dirty = [False] * n
        self.dist[0], self.dirty[0] = 0, True
        self.tpend = [INF] * self.tiles
        self.tpend[0] = 0
        self.tstamp = [-1] * self.tiles
        self.queues = {0: [0]}
        self.tstamp[0] = 0

    def queue(self, t, r):
        if self.tstamp[t] < r:  # atomicMax(tstamp) < r: the first to queue t for round r appends
            self.tstamp[t] = r
            self.queues.setdefault(r, []).append(t)

    def activation(self, t, r, T):
        vs = [v for v in range(self.n) if self.tile_of[v] == t]
        first, local, touched0 = {}, {}, {}
        for v in vs:  # the load: dist, dirty, then the inbox taken if not empty
            first[v] = d = self.dist[v]
            yield
            got = False
            if self.inbox[v] != INF:
                taken, self.inbox[v] = self.inbox[v], INF  # atomicExch
                yield
                if taken < d and self.keep_taken:
                    d, got = taken, True
            touched0[v] = self.dirty[v] or got
            self.dirty[v] = False
            local[v] = d
        work = any(touched0[v] and local[v] < T for v in vs)
        sweeps, changed = 0, set()
        while work and sweeps < self.cap:  # inside the tile: shared memory, no other block sees it
            before = dict(local)
            for v in vs:
                for u, w in self.into[v]:
                    if before[u] < T and before[u] + w < local[v]:
                        local[v] = before[u] + w
            changed = {v for v in vs if local[v] < before[v]}
            work = bool(changed)
            sweeps += 1
        left = changed if work else set()
        least = INF
        for v in vs:  # the write-back
            touched = touched0[v] or local[v] < first[v]
            if local[v] < first[v]:
                self.dist[v] = local[v]
                yield
            if v in left or (touched and local[v] >= T):
                self.dirty[v] = True
                least = min(least, local[v])
            if touched and local[v] < T:
                for h, w in self.boundary[v]:
                    nd = local[v] + w
                    seen = self.dist[h]  # may be stale: only ever higher
                    yield
                    if nd < seen:
                        old = self.inbox[h]
                        self.inbox[h] = min(old, nd)  # atomicMin
                        yield
                        if nd < old and self.queue_news:
                            self.queue(self.tile_of[h], r + 1)
        self.tpend[t] = least
        if left:
            self.queue(t, r + 1)

    def solve(self):
        r, T = 0, min(self.delta, INF)
        for _ in range(20000):
            tiles = self.queues.get(r, [])
            if not tiles:  # a split
                low = min(self.tpend)
                if low == INF:
                    return self.dist
                T = min(low + self.delta, INF)
                for t in range(self.tiles):
                    if self.tpend[t] < T:
                        self.queue(t, r)
                continue
            running = [self.activation(t, r, T) for t in tiles]
            while running:  # the round: every activation interleaved with the others
                step = self.rng.choice(running)
                try:
                    next(step)
                except StopIteration:
                    running.remove(step)
            r += 1  # the grid barrier
        raise AssertionError("no convergence")


def random_case(rng):
    n = rng.randint(2, 36)
    return n, random_graph(rng, n, per_vertex=4), rng.randint(1, 8), rng.choice([1, 3, 10, INF]), rng.choice([1, 2, 5, 10**6])


@pytest.mark.parametrize("seed", range(4))
def test_rounds_with_inboxes_in_any_interleaving_give_dijkstra(seed):
    rng = random.Random(seed)
    for _ in range(80):
        n, adj, size, delta, cap = random_case(rng)
        assert Model(n, adj, size, delta, cap, rng).solve() == dijkstra(adj, n)


@pytest.mark.parametrize("slip", ["queue_news", "keep_taken"])
def test_the_model_catches_a_lost_boundary_improvement(slip):
    rng = random.Random(7)
    wrong = 0
    for _ in range(150):
        n, adj, size, delta, cap = random_case(rng)
        if Model(n, adj, size, delta, cap, rng, **{slip: False}).solve() != dijkstra(adj, n):
            wrong += 1
    assert wrong > 0
