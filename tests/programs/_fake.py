"""Stand-in sssp programs for the grader's tests: each misbehaves in one way.

They read -input/--input and -output/--output (either form), compute the right distances
with a small Dijkstra, and then do what their name says. FAKE_SLEEP=seconds slows
each run (the interrupt test needs a sweep that takes a while).
"""
import heapq
import os
import sys
import time

TIMING = ("The total computation kernel time on GPU Fake Device is 1.5 milli-seconds\n"
          "The total filtering kernel time on GPU Fake Device is 0 milli-seconds\n")


def option(argv, name):
    for flag in (f"-{name}", f"--{name}"):
        if flag in argv:
            return argv[argv.index(flag) + 1]
    raise SystemExit(f"fake: missing -{name}")


def distances(path):
    adjacency, n = {}, 0
    with open(path) as handle:
        for line in handle:
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            u, v = int(parts[0]), int(parts[1])
            w = int(parts[2]) if len(parts) > 2 else 1
            adjacency.setdefault(u, []).append((v, w))
            n = max(n, u + 1, v + 1)
    dist = [None] * n
    heap = [(0, 0)]
    while heap:
        d, u = heapq.heappop(heap)
        if dist[u] is not None:
            continue
        dist[u] = d
        for v, w in adjacency.get(u, ()):
            if dist[v] is None:
                heapq.heappush(heap, (d + w, v))
    return dist


def write(path, dist):
    with open(path, "w") as out:
        for v, d in enumerate(dist):
            out.write(f"{v}:{'INF' if d is None else d}\n")


def main(behaviour):
    argv = sys.argv[1:]
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    dist = distances(option(argv, "input"))
    output = option(argv, "output")
    if behaviour == "crash":
        print("fake: device failed", file=sys.stderr)
        sys.exit(3)
    if behaviour == "hang":
        time.sleep(3600)
    if behaviour == "wrong":
        dist = [None if d is None else d + (v % 2) for v, d in enumerate(dist)]
    if behaviour == "chatty":
        sys.stdout.write(TIMING)
        chunk = "x" * 1023 + "\n"
        sys.stdout.write(chunk * (5 * 1024))   # 5 MiB
    elif behaviour != "notiming":
        sys.stdout.write(TIMING)
    sys.stdout.flush()
    if behaviour != "nofile":
        write(output, dist)
