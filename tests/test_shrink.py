"""The shrinker's own logic on pure-Python "programs" (no processes): ddmin, renumbering,
weights, budgets, flakiness; and the random search's graph families."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from grader.data.smallgraphs import FAMILIES, family_graph, search_graphs
from grader.sweep.shrink import Budget, EdgeList, Reducer, renumber, shrink

INF = None


def correct(graph: EdgeList, n: int | None = None) -> list:
    """Plain Bellman-Ford: the trusted answer for these tests (n: the file's vertex count, when
    a buggy program below has dropped edges before solving)."""
    n = graph.vertices if n is None else n
    dist = [INF] * n
    dist[0] = 0
    for _ in range(n):
        changed = False
        for u, v, w in graph.rows():
            if dist[u] is not None and (dist[v] is None or dist[u] + w < dist[v]):
                dist[v], changed = dist[u] + w, True
        if not changed:
            break
    return dist


def drops_last_out_edge_of_wide_vertices(graph: EdgeList) -> list:
    """A CSR off-by-one: the last out-edge of a vertex of out-degree >= 3 is never relaxed."""
    last = {}
    degree = {}
    for index, (u, _, _) in enumerate(graph.rows()):
        last[u], degree[u] = index, degree.get(u, 0) + 1
    skipped = {last[u] for u in last if degree[u] >= 3}
    return correct(graph.take(np.array([i for i in range(graph.edges) if i not in skipped], dtype=np.int64)),
                   graph.vertices)


def only_32_in_edges(graph: EdgeList) -> list:
    """A segmented scan that only sees the first warp's worth (32) of a vertex's in-edges."""
    seen: dict[int, int] = {}
    keep = []
    for index, (_, v, _) in enumerate(graph.rows()):
        seen[v] = seen.get(v, 0) + 1
        if seen[v] <= 32:
            keep.append(index)
    return correct(graph.take(np.array(keep, dtype=np.int64)), graph.vertices)


def judge(program):
    def trial(graph: EdgeList) -> str:
        return "ok" if program(graph) == correct(graph) else "wrong"
    return trial


def random_graph(seed: int, n: int = 60, m: int = 300) -> EdgeList:
    rng = random.Random(seed)
    return EdgeList.of((rng.randrange(n), rng.randrange(n), rng.randint(1, 50)) for _ in range(m))


def test_renumber_keeps_the_source_and_makes_ids_compact():
    graph = EdgeList.of([(7, 3, 5), (0, 7, 1), (3, 9, 2)])
    compact = renumber(graph)
    assert compact.rows() == [(1, 2, 5), (0, 1, 1), (2, 3, 2)] and compact.vertices == 4
    assert renumber(EdgeList.of([(5, 6, 1)])).rows() == [(1, 2, 1)]      # vertex 0 stays, isolated


def test_the_csr_off_by_one_shrinks_to_three_edges():
    graph = random_graph(1)
    trial = judge(drops_last_out_edge_of_wide_vertices)
    assert trial(graph) == "wrong"
    result = shrink(graph, trial, "wrong", budget=Budget(runs=2000, seconds=60))
    assert result.stopped == "1-minimal" and trial(result.graph) == "wrong"
    assert result.graph.edges == 3 and result.graph.vertices <= 4
    assert all(w == 1 for w in result.graph.weight.tolist())            # weights lowered
    assert set(result.graph.src.tolist()) == {0}                         # one wide vertex: the source
    assert result.failed == result.tried == 1 and not result.flaky


def test_a_bug_past_32_in_edges_keeps_33():
    rng = random.Random(2)
    edges = [(0, 1, rng.randint(2, 9)) for _ in range(40)] + [(0, 1, 1)] + \
            [(rng.randrange(30), rng.randrange(30), 3) for _ in range(100)]
    graph = EdgeList.of(edges)
    trial = judge(only_32_in_edges)
    result = shrink(graph, trial, "wrong", budget=Budget(runs=5000, seconds=60))
    assert trial(result.graph) == "wrong" and result.stopped == "1-minimal"
    assert result.graph.edges == 33


def test_a_correct_program_has_nothing_to_shrink():
    with pytest.raises(ValueError, match="not a failure"):
        Reducer(judge(correct), "ok")
    for name, edges in search_graphs(40):
        assert judge(correct)(EdgeList.of(edges)) == "ok", name


def test_budgets_stop_the_search_and_say_which():
    graph = random_graph(3)
    trial = judge(drops_last_out_edge_of_wide_vertices)
    by_runs = shrink(graph, trial, "wrong", budget=Budget(runs=5, seconds=60))
    assert by_runs.stopped == "budget: 5 runs" and by_runs.runs == 5
    assert trial(by_runs.graph) == "wrong"                      # still a failing graph, just bigger
    ticks = iter(range(10_000))
    by_time = shrink(graph, trial, "wrong", budget=Budget(runs=10_000, seconds=3), clock=lambda: next(ticks))
    assert by_time.stopped == "safety stop: 3 s" and trial(by_time.graph) == "wrong"


def test_a_crash_counts_only_for_a_crash_and_wrong_always_counts():
    statuses = iter(["crash", "wrong", "timeout"])
    reducer = Reducer(lambda g: next(statuses), "wrong", tries=1)
    graph = EdgeList.of([(0, 1, 1)])
    assert not reducer.fails(graph) and reducer.fails(graph) and not reducer.fails(graph)
    crash = Reducer(lambda g: "crash", "crash")
    assert crash.fails(graph)


def test_a_flaky_failure_is_kept_when_seen_once_and_reported_as_flaky():
    rng = random.Random(4)

    def racy(graph: EdgeList) -> str:             # wrong on a wide vertex, one time in three
        wrong = drops_last_out_edge_of_wide_vertices(graph) != correct(graph)
        return "wrong" if wrong and rng.random() < 1 / 3 else "ok"

    graph = random_graph(5)
    result = shrink(graph, racy, "wrong", tries=12, confirm=9, budget=Budget(runs=20_000, seconds=120))
    assert result.failed >= 1 and result.tried == 10 and result.flaky
    assert drops_last_out_edge_of_wide_vertices(result.graph) != correct(result.graph)   # a real failure
    assert result.graph.edges <= 4


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_gives_a_valid_small_graph(family):
    rng = np.random.default_rng(0)
    edges = family_graph(family, rng, max_vertices=64)
    graph = EdgeList.of(edges)
    assert graph.edges > 0 and graph.vertices <= 64 and (graph.weight >= 0).all()
    if family == "wide-in":
        assert np.bincount(graph.dst).max() > 32
    if family == "self-loops":
        assert (graph.src == graph.dst).any()
    if family == "unreachable":
        assert None in correct(graph)
    if family == "zero-weights":
        assert (graph.weight == 0).any()


def test_the_grading_config_sets_the_counterexample_budget_and_names_a_bad_key(tmp_path):
    from grader.grading.config import load_grading
    from grader.tomlfile import ConfigError
    root = Path(__file__).resolve().parents[1]
    base = (f'graphs = ["figure1"]\n[program]\ncommand = "{{sssp}} -input {{input}} -output {{output}} {{method}}"\n'
            f'[methods.bmf]\n[grading]\nrubric = "{root / "configs" / "rubric.toml"}"\n[grading.counterexamples]\n')
    good = tmp_path / "good.toml"
    good.write_text(base + "floor_s = 0\nsearch_graphs = 0\nmax_runs = 50\nshare = 0.1\nfloor_runs = 7\n")
    settings = load_grading(good).counterexamples
    assert (settings.floor_s, settings.search_graphs, settings.budget.runs, settings.share, settings.floor_runs) \
        == (0, 0, 50, 0.1, 7)
    for bad, key in (("floor_s = -1\n", "floor_s"), ("max_runs = 0\n", "max_runs"), ("budget = 3\n", "budget"),
                     ("floor_runs = -1\n", "floor_runs")):
        path = tmp_path / "bad.toml"
        path.write_text(base + bad)
        with pytest.raises(ConfigError, match=key):
            load_grading(path)


def wrong_vertices(graph: EdgeList, program) -> list[int]:
    return [v for v, (want, got) in enumerate(zip(correct(graph), program(graph))) if want != got]


def expected_array(graph: EdgeList) -> np.ndarray:
    return np.array([-1 if d is None else d for d in correct(graph)], dtype=np.int64)


@pytest.mark.parametrize("jobs", [2, 4, 8])
def test_candidates_in_parallel_give_the_same_graph_and_the_same_charged_runs(jobs):
    """ddmin's candidates of one step run `jobs` at once, the lowest-index failing one taken: the
    graph and the runs charged are those of the one-at-a-time search, whatever the batch size."""
    graph = random_graph(1)
    trial = judge(drops_last_out_edge_of_wide_vertices)
    alone = shrink(graph, trial, "wrong", budget=Budget(runs=2000))
    started = []

    def batch(graphs):
        started.append(len(graphs))
        return [trial(g) for g in reversed(graphs)][::-1]     # answers in order whatever ran first
    together = shrink(graph, trial, "wrong", budget=Budget(runs=2000), batch=batch, jobs=jobs)
    assert together.graph.rows() == alone.graph.rows() and together.runs == alone.runs
    assert max(started) > 1 and together.started == sum(started) > together.runs
    capped = shrink(graph, trial, "wrong", budget=Budget(runs=40), batch=batch, jobs=jobs)
    assert capped.stopped == "budget: 40 runs" and capped.runs == 40
    assert capped.graph.rows() == shrink(graph, trial, "wrong", budget=Budget(runs=40)).graph.rows()


def test_the_start_is_the_path_to_the_nearest_wrong_vertex_and_its_neighbourhood():
    from grader.sweep.shrink import nearest_wrong_path, starting_points
    # 0 -> 1 -> 2 -> 3 is the shortest path to 3; 0 -> 4 directly; the wrong vertices are 3 and 4
    graph = EdgeList.of([(0, 1, 1), (1, 2, 1), (2, 3, 1), (0, 3, 9), (0, 4, 2), (4, 5, 1), (5, 6, 1), (6, 7, 1)])
    assert nearest_wrong_path(graph, expected_array(graph), [3, 4]) == [0, 4]      # 1 edge, not 3
    assert nearest_wrong_path(graph, expected_array(graph), [3]) == [0, 1, 2, 3]
    points = starting_points(graph, expected_array(graph), [3, 4])
    # the out-edges of 0 (3); every edge of 0 and 4 (4); the cone of 3 and 4 (5); of 0, 4, 1, 3 and 5 (7)
    assert [(why.split(" and ", 1)[-1], g.edges) for why, g in points] == \
        [("the 3 out-edges of the vertex before it nearest the path's", 3), ("1 hop around it (out- and in-edges)", 4),
         ("the cone of the vertices it got wrong", 5), ("2 hops around it (out- and in-edges)", 7)]
    assert points[0][1].rows() == [(0, 1, 1), (0, 2, 9), (0, 3, 2)]                # renumbered, 0 the source
    assert points[1][1].rows() == [(0, 1, 1), (0, 2, 9), (0, 3, 2), (3, 4, 1)]


def test_the_first_starts_keep_the_hub_edges_nearest_the_path_then_its_whole_list():
    """0 -> 1 -> 2 is the path to the wrong vertex 2; vertex 1 is a hub of 21 out-edges, the path's
    the 11th in file order: the first start keeps it and 2 of 1's edges each side, the next 8
    each side, then 1's whole list, then every path vertex's out-edges (0 has two more): a slip
    in walking a hub's list (the last edge, a chunk's end) shows at the size it needs."""
    from grader.sweep.shrink import starting_points
    hub = [(1, 10 + k, 1) for k in range(10)] + [(1, 2, 1)] + [(1, 30 + k, 1) for k in range(10)]
    graph = EdgeList.of([(0, 1, 1), (0, 40, 5), (0, 41, 5)] + hub + [(2, 3, 1)])
    points = starting_points(graph, expected_array(graph), [2, 3])
    sizes = [(why.split(" and ", 1)[-1], g.edges) for why, g in points if "cone" not in why][:4]   # the cone: 3
    assert sizes == [("the 5 out-edges of the vertex before it nearest the path's", 6),
                     ("the 17 out-edges of the vertex before it nearest the path's", 18),
                     ("the out-edges of the vertex before it", 22),
                     ("the out-edges of the vertices before it", 24)], sizes
    first = next(g for why, g in points if "the 5 out-edges" in why).rows()
    # renumbered in order of appearance: 0 the source, 1 the hub, its five heads 2..6, the path's the middle one
    assert first == [(0, 1, 1), (1, 2, 1), (1, 3, 1), (1, 4, 1), (1, 5, 1), (1, 6, 1)]


def test_a_wrong_source_has_no_path_to_start_from():
    from grader.sweep.shrink import starting_points
    graph = EdgeList.of([(0, 1, 1), (1, 2, 1)])
    points = starting_points(graph, expected_array(graph), [0, 2])
    assert all("path to wrong vertex" not in why for why, _ in points)


def test_a_start_near_the_wrong_vertex_saves_runs_on_a_large_graph():
    graph = random_graph(7, n=2000, m=8000)
    trial = judge(drops_last_out_edge_of_wide_vertices)
    from grader.sweep.shrink import starting_points
    starts = starting_points(graph, expected_array(graph), wrong_vertices(graph, drops_last_out_edge_of_wide_vertices))
    near = shrink(graph, trial, "wrong", budget=Budget(runs=150), starts=starts)
    assert near.steps[0].startswith("started from the path to wrong vertex") and near.graph.edges <= 4, near.steps
    far = shrink(graph, trial, "wrong", budget=Budget(runs=150))
    assert near.stopped == "1-minimal" and near.runs < far.runs, (near.runs, far.runs, far.stopped)
