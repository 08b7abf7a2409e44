"""``python -m grader synth NAME...``: write deterministic stand-ins for the spec's big graphs."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from sssp_common.edgelist import write_edge_list
from grader.data import synth
from grader.data.datasets import DatasetError, load_catalogue, scale_fraction, scale_tag


HELP = "write deterministic stand-ins for the big graphs"


def add_arguments(parser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="stand-in names (e.g. roadNet-CA~synth) or 'all'")
    parser.add_argument("--out", type=Path, default=Path("data/synth"), metavar="DIR", help="output folder (default data/synth)")
    parser.add_argument("--scale", default="full", metavar="ci|full|X", help="size: ci, full or a fraction (default full)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def run_from_args(args) -> int:
    from sssp_common.errors import UsageError
    from grader.sweep.config import ConfigError, parse_scale
    try:
        scale = parse_scale(args.scale, "--scale")
    except ConfigError as error:
        raise UsageError(str(error)) from None
    return run(names=args.names, out_dir=args.out, scale=scale, seed=args.seed)


def run(names: list[str], out_dir: Path = Path("data/synth"), scale: str | float = "full", seed: int = 0,
        out=sys.stderr) -> int:
    """Write ``<out_dir>/<name>~synth[.<scale>].txt`` for each name ("all": every stand-in); 0 on success."""
    try:
        catalogue = load_catalogue()
    except DatasetError as err:
        print(f"grader synth: {err}", file=out)
        return 1
    standins = {name: entry for name, entry in catalogue.items() if entry.kind == "synth"}
    wanted = []
    for name in (list(standins) if list(names) == ["all"] else names):
        key = name if name in standins else f"{name}~synth"
        if key not in standins:
            print(f"grader synth: unknown stand-in {name!r}; known: {', '.join(standins)} (or 'all')", file=out)
            return 1
        wanted.append(standins[key])
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        print(f"grader synth: cannot create {out_dir}: {err.strerror or err}", file=out)
        return 1
    for entry in wanted:
        try:
            fraction = scale_fraction(entry, scale)
        except DatasetError as err:
            print(f"grader synth: {err}", file=out)
            return 1
        suffix = "" if fraction == "full" else f".{scale_tag(fraction)}"
        path = out_dir / f"{entry.name}{suffix}.txt"
        started = time.perf_counter()
        graph = synth.standin(entry.standin_of, scale=fraction, seed=seed)
        generated = time.perf_counter() - started
        try:
            write_edge_list(path, graph, header=f"{entry.name}: {entry.description}\n"
                                                      f"generator {entry.generator} v{synth.GENERATOR_VERSION}, "
                                                      f"scale {fraction}, seed {seed}")
        except OSError as err:
            print(f"grader synth: cannot write {path}: {err.strerror or err}", file=out)
            return 1
        written = time.perf_counter() - started - generated
        print(f"grader synth: {path}: {graph.n:,} vertices, {graph.m:,} edges, "
              f"{path.stat().st_size / 1e6:,.1f} MB (generated in {generated:.1f} s, written in {written:.1f} s)",
              file=out)
    return 0
