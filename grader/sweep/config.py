"""Load and check a sweep matrix (TOML) into a plain dataclass.

Why strict: a typo in a sweep file ("orderigs") would otherwise silently run the
defaults for hours; every unknown key or bad value stops with the file and key named, and the
nearest valid name ("did you mean 'tpe'?"). Nothing runs until the whole matrix is known to be
runnable: graphs in the catalogue (or files), methods the program knows, the vocabulary's syncs
and orderings, block sizes ./sssp accepts; whether each graph is here and verifies is
grader.sweep.graphs.check_available's question, asked before anything runs or is listed.
"""
from __future__ import annotations

import difflib
import string
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.data.catalogue import DatasetError, load_catalogue, unknown_graph
from grader.tomlfile import ConfigError, check_keys, did_you_mean, read_toml
from sssp_common.vocabulary import METHODS, ORDERINGS, SEGSCAN, SPEC_CONFIGS, SYNCS, program_method


# The spec's single-dash form for our ./sssp; the method word is bare.
PROJECT_TEMPLATE = ("{sssp} -input {input} -bsize {bsize} -bcount {bcount} -output {output} "
                    "{method} -sync {sync} -usesmem {usesmem}")
# The course sample package's form.
SAMPLE_PACKAGE_TEMPLATE = ("{sssp} --input {input} --bsize {bsize} --bcount {bcount} --output {output} "
                           "--method {method} --sync {sync} --usesmem {usesmem}")
PLACEHOLDERS = frozenset({"sssp", "python", "config_dir", "input", "output", "bsize", "bcount",
                          "method", "sync", "usesmem", "ordering", "graph", "rep"})
# ./sssp's (and the spec's) thread block: a whole number of warps, at most 1024 threads
BSIZE_MIN, BSIZE_MAX, WARP = 32, 1024, 32


@dataclass(frozen=True)
class MethodSpec:
    """One method of the matrix: the word the program gets and the spec's pairings."""
    name: str                      # as recorded in results: bmf, segscan, tpe, opt
    run_as: str                    # the {method} placeholder: segscan runs as bmf
    usesmem: str                   # the {usesmem} placeholder: yes for segscan
    orderings: tuple[str, ...]
    syncs: tuple[str, ...]


# The spec's pairings ("What to Report?"): segscan only destination-sorted and
# out-of-core; tpe on source-sorted lists in both syncs; opt is ours.
DEFAULT_METHODS: dict[str, MethodSpec] = {
    "bmf": MethodSpec("bmf", "bmf", "no", ORDERINGS, SYNCS),
    SEGSCAN: MethodSpec(SEGSCAN, program_method(SEGSCAN)[0], "yes", ("destination",), ("outcore",)),
    "tpe": MethodSpec("tpe", "tpe", "no", ("source",), SYNCS),
    "opt": MethodSpec("opt", "opt", "no", ("given", "source"), SYNCS),
}
# The seed papers' methods: known by name (a sweep's list, --methods), run only when
# named. They build a CSR, so the edge order does not matter: "given" only. vbf*: outcore is the
# papers' prevDistance/distance pair, incore in place; harish and dijkstra mean the same by both.
PAPER_METHOD_SPECS: dict[str, MethodSpec] = {
    **{name: MethodSpec(name, name, "no", ("given",), SYNCS) for name in ("vbf", "vbf-stride", "vbf-flag")},
    **{name: MethodSpec(name, name, "no", ("given",), ("outcore",)) for name in ("harish", "dijkstra")},
}
KNOWN_METHODS: dict[str, MethodSpec] = {**DEFAULT_METHODS, **PAPER_METHOD_SPECS}


@dataclass(frozen=True)
class SweepConfig:
    """Everything a sweep needs to know besides the command line's overrides."""
    path: Path
    name: str
    graphs: tuple[str, ...]
    scale: str | float = "ci"
    configs: tuple[tuple[int, int], ...] = SPEC_CONFIGS
    orderings: tuple[str, ...] = ORDERINGS
    methods: tuple[MethodSpec, ...] = tuple(DEFAULT_METHODS.values())
    reps: int = 1
    warmup: int = 0                # warm-up runs per (graph, ordering, method, sync), rep < 0
    timeout_s: float = 120.0
    program_label: str = "project"
    command: str = PROJECT_TEMPLATE
    sentinels: tuple[int, ...] = ()
    data_dirs: tuple[Path, ...] = ()
    cache_dir: Path | None = None
    notes: tuple[str, ...] = field(default=())
    executor: str = "local"        # [executor]: where cells run (grader.sweep.executors)
    workers: int | None = None     # local: worker processes (default one per GPU)
    scheduler: str | None = None   # dask: the scheduler's address
    warm: bool = True              # this checkout's ./sssp in a kept process (grader.sweep.warm); --cold: not

    @property
    def config_dir(self) -> Path:
        return self.path.parent


TOP_KEYS = {"name", "graphs", "scale", "configs", "orderings", "methods", "reps", "warmup", "timeout_s",
            "program", "data_dirs", "cache_dir", "description", "executor"}
PROGRAM_KEYS = {"label", "command", "sentinels"}
EXECUTOR_KEYS = {"kind", "workers", "scheduler"}
METHOD_KEYS = {"run_as", "usesmem", "orderings", "syncs"}


def parse_scale(value, where: str = "scale") -> str | float:
    """'ci', 'full' or a positive fraction of the full size (a number or a numeric string)."""
    if isinstance(value, str) and value.strip().lower() in ("ci", "full"):
        return value.strip().lower()
    return _positive(value, where, "'ci', 'full' or a positive number")


def template_fields(template: str) -> set[str]:
    """The placeholder names in a command template ({input}, {output}, ...)."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as error:
        raise ConfigError(f"bad command template {template!r}: {error}") from None


def check_template(template: str, where: str) -> str:
    if not isinstance(template, str) or not template.strip():
        raise ConfigError(f"{where}: must be a non-empty string")
    names = template_fields(template)
    unknown = sorted(names - PLACEHOLDERS)
    if unknown:
        nearest = difflib.get_close_matches(unknown[0], PLACEHOLDERS, n=1)
        raise ConfigError(f"{where}: unknown placeholder(s) {', '.join('{%s}' % n for n in unknown)}; "
                          + (f"did you mean '{{{nearest[0]}}}'?" if nearest else
                             f"known: {', '.join(sorted(PLACEHOLDERS))}"))
    for needed in ("input", "output"):
        if needed not in names:
            raise ConfigError(f"{where}: the template needs {{{needed}}}")
    return template


def load_config(path: Path | str, *, scale=None, program=None, graphs=None, methods=None,
                reps=None, timeout=None) -> SweepConfig:
    """Read a sweep TOML; the keyword arguments are command-line overrides (None: keep the file's)."""
    path = Path(path)
    raw = read_toml(path)
    try:
        config = _from_table(path, raw)
        return apply_overrides(config, scale=scale, program=program, graphs=graphs, methods=methods,
                               reps=reps, timeout=timeout)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def load_matrix(path: Path | str) -> SweepConfig:
    """The matrix of a sweep or a grading config (whose [grading] table grader.grading.config reads)."""
    path = Path(path)
    raw = read_toml(path)
    raw.pop("grading", None)
    try:
        return apply_overrides(_from_table(path, raw))
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def apply_overrides(config: SweepConfig, *, scale=None, program=None, graphs=None, methods=None,
                    reps=None, timeout=None) -> SweepConfig:
    """The command line wins over the file; the same checks apply, then the methods against the
    program that will run them."""
    changes: dict = {}
    if scale is not None:
        changes["scale"] = parse_scale(scale, "--scale")
    if program is not None:
        changes["command"] = check_template(program, "--program")
    if graphs is not None:
        names = _split_list(graphs)
        if not names:
            raise ConfigError("--graphs: no graph named")
        changes["graphs"] = _known_graphs(names, "--graphs")
    if methods is not None:
        wanted = _split_list(methods)
        # the sweep's own methods, and the seed papers' (which no spec sweep lists) by name
        known = {**PAPER_METHOD_SPECS, **{m.name: m for m in config.methods}}
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise ConfigError(f"--methods: not in this sweep: {', '.join(unknown)} "
                              f"(it has {', '.join(m.name for m in config.methods)}; any sweep also takes "
                              f"{', '.join(PAPER_METHOD_SPECS)}){did_you_mean(unknown[0], known)}")
        changes["methods"] = tuple(known[name] for name in wanted)
    if reps is not None:
        changes["reps"] = _positive_int(reps, "--reps")
    if timeout is not None:
        changes["timeout_s"] = _positive_number(timeout, "--timeout")
    config = replace(config, **changes)
    _check_method_words(config)
    return config


def _known_graphs(entries, key: str) -> tuple[str, ...]:
    """Graph entries: files (a slash or a graph suffix) or catalogue names; a name the catalogue
    lacks stops here with the nearest it has (a misspelt stand-in would otherwise list its cells)."""
    names = [entry for entry in entries if not looks_like_path(entry)]
    if names:
        try:
            catalogue = load_catalogue()
        except DatasetError as error:
            raise ConfigError(str(error)) from None
        for name in names:
            if name not in catalogue:
                raise ConfigError(f"{key}: {unknown_graph(name, catalogue)}")
    return tuple(entries)


def looks_like_path(entry: str) -> bool:
    """Graph entries may be catalogue names or edge-list files; a slash or a file suffix says file."""
    return "/" in entry or "\\" in entry or entry.endswith((".txt", ".gr", ".gz", ".el", ".tsv", ".csv", ".edges"))


def _check_method_words(config: SweepConfig) -> None:
    """A program run through {sssp} (this checkout's ./sssp or a student's build) knows the
    vocabulary's method words only; another program (a template without {sssp}) is the config's own."""
    if "sssp" not in template_fields(config.command):
        return
    for method in config.methods:
        if method.run_as not in METHODS:
            where = f"methods.{method.name}" + (".run_as" if method.run_as != method.name else "")
            raise ConfigError(f"key '{where}': unknown method {method.run_as!r}"
                              f"{did_you_mean(method.run_as, METHODS) or '; known: ' + ', '.join(METHODS)}")


def _split_list(value) -> list[str]:
    items = value.split(",") if isinstance(value, str) else [part for item in value for part in str(item).split(",")]
    return [item.strip() for item in items if item.strip()]


def _from_table(path: Path, raw: dict) -> SweepConfig:
    check_keys(raw, TOP_KEYS)
    name = raw.get("name", path.stem)
    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise ConfigError(f"key 'name': must be a non-empty string without '/', got {name!r}")
    graphs = raw.get("graphs")
    if not isinstance(graphs, list) or not graphs or not all(isinstance(g, str) and g.strip() for g in graphs):
        raise ConfigError("key 'graphs': must be a non-empty list of graph names or file paths")
    orderings = _choice_list(raw.get("orderings", list(ORDERINGS)), ORDERINGS, "orderings")
    program = raw.get("program", {})
    if not isinstance(program, dict):
        raise ConfigError("key 'program': must be a table ([program])")
    check_keys(program, PROGRAM_KEYS, "program")
    label = program.get("label", "project")
    if not isinstance(label, str) or not label.strip():
        raise ConfigError("key 'program.label': must be a non-empty string")
    sentinels = program.get("sentinels", [])
    if not isinstance(sentinels, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in sentinels):
        raise ConfigError("key 'program.sentinels': must be a list of integers (values meaning unreachable)")
    config = SweepConfig(
        path=path,
        name=name.strip(),
        graphs=tuple(g.strip() for g in graphs),
        scale=parse_scale(raw.get("scale", "ci"), "key 'scale'"),
        configs=_configs(raw.get("configs", [list(c) for c in SPEC_CONFIGS])),
        orderings=orderings,
        methods=_methods(raw.get("methods", list(DEFAULT_METHODS))),
        reps=_positive_int(raw.get("reps", 1), "key 'reps'"),
        warmup=_count(raw.get("warmup", 0), "key 'warmup'"),
        timeout_s=_positive_number(raw.get("timeout_s", 120), "key 'timeout_s'"),
        program_label=label.strip(),
        command=check_template(program.get("command", PROJECT_TEMPLATE), "key 'program.command'"),
        sentinels=tuple(sentinels),
        data_dirs=tuple(_path_list(raw.get("data_dirs", []), path.parent, "data_dirs")),
        cache_dir=_optional_path(raw.get("cache_dir"), path.parent, "cache_dir"),
        **_executor(raw.get("executor", {})),
    )
    _known_graphs(config.graphs, "key 'graphs'")   # last: the file's other mistakes are named first
    return config


def _executor(table) -> dict:
    """[executor]: kind = "local" | "dask", workers = N, scheduler = "tcp://HOST:8786"."""
    if not isinstance(table, dict):
        raise ConfigError("key 'executor': must be a table ([executor])")
    check_keys(table, EXECUTOR_KEYS, "executor")
    kind = table.get("kind", "local")
    if kind not in ("local", "dask"):
        raise ConfigError(f"key 'executor.kind': must be 'local' or 'dask', got {kind!r}")
    scheduler = table.get("scheduler")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise ConfigError("key 'executor.scheduler': must be an address such as 'tcp://HOST:8786'")
    workers = table.get("workers")
    return {"executor": kind, "workers": None if workers is None else _positive_int(workers, "key 'executor.workers'"),
            "scheduler": scheduler.strip() if scheduler else None}


def _choice_list(value, allowed, key) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"key '{key}': must be a non-empty list drawn from {', '.join(allowed)}")
    for item in value:
        if item not in allowed:
            raise ConfigError(f"key '{key}': {item!r} is not one of {', '.join(allowed)}"
                              f"{did_you_mean(item, allowed)}")
    return tuple(dict.fromkeys(value))


def _configs(value) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError("key 'configs': must be a non-empty list of [bsize, bcount] pairs")
    pairs = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in item)):
            raise ConfigError(f"key 'configs': {item!r} is not a [bsize, bcount] pair of positive integers")
        bsize, bcount = item
        if bsize % WARP or not BSIZE_MIN <= bsize <= BSIZE_MAX:
            nearest = min(BSIZE_MAX, max(BSIZE_MIN, WARP * round(bsize / WARP)))
            raise ConfigError(f"key 'configs': {item!r}: block size {bsize} is not a multiple of {WARP} in "
                              f"{BSIZE_MIN}..{BSIZE_MAX}; did you mean [{nearest}, {bcount}]?")
        pairs.append((bsize, bcount))
    return tuple(dict.fromkeys(pairs))


def _methods(value) -> tuple[MethodSpec, ...]:
    """A list of the known names, or tables [methods.NAME] over the defaults of that name."""
    if isinstance(value, list):
        if not value:
            raise ConfigError("key 'methods': empty")
        for name in value:
            if name not in KNOWN_METHODS:
                raise ConfigError(f"key 'methods': unknown method {name!r} (known: {', '.join(KNOWN_METHODS)}; "
                                  f"define others as [methods.NAME] tables){did_you_mean(name, KNOWN_METHODS)}")
        return tuple(KNOWN_METHODS[name] for name in dict.fromkeys(value))
    if not isinstance(value, dict) or not value:
        raise ConfigError("key 'methods': must be a list of method names or [methods.NAME] tables")
    specs = []
    for name, table in value.items():
        where = f"methods.{name}"
        if not isinstance(table, dict):
            raise ConfigError(f"key '{where}': must be a table")
        check_keys(table, METHOD_KEYS, where)
        base = KNOWN_METHODS.get(name, MethodSpec(name, name, "no", ORDERINGS, SYNCS))
        run_as = table.get("run_as", base.run_as)
        usesmem = table.get("usesmem", base.usesmem)
        if not isinstance(run_as, str) or not run_as.strip():
            raise ConfigError(f"key '{where}.run_as': must be a non-empty string")
        if usesmem not in ("yes", "no"):
            raise ConfigError(f"key '{where}.usesmem': must be 'yes' or 'no', got {usesmem!r}")
        specs.append(MethodSpec(
            name=name, run_as=run_as.strip(), usesmem=usesmem,
            orderings=_choice_list(table.get("orderings", list(base.orderings)), ORDERINGS, f"{where}.orderings"),
            syncs=_choice_list(table.get("syncs", list(base.syncs)), SYNCS, f"{where}.syncs")))
    return tuple(specs)


def _positive(value, where: str, expected: str, convert=float):
    """``value`` (a number or a numeric string) as a positive ``convert`` (float or int: then a
    whole number); else "WHERE: must be EXPECTED, got VALUE". True/False are not numbers here."""
    bad = ConfigError(f"{where}: must be {expected}, got {value!r}")
    if isinstance(value, bool):
        raise bad
    try:
        number = convert(value)
    except (TypeError, ValueError):
        raise bad from None
    if not number > 0 or (isinstance(value, float) and value != number):
        raise bad
    return number


def _positive_int(value, where) -> int:
    return _positive(value, where, "a positive integer", int)


def _count(value, where) -> int:
    """A non-negative integer (0 allowed, unlike reps)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ConfigError(f"{where}: must be a whole number >= 0, got {value!r}")


def _positive_number(value, where) -> float:
    return _positive(value, where, "a positive number of seconds")


def _path_list(value, base: Path, key) -> list[Path]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"key '{key}': must be a list of folder paths")
    return [_relative_to(base, v) for v in value]


def _optional_path(value, base: Path, key) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"key '{key}': must be a folder path")
    return _relative_to(base, value)


def _relative_to(base: Path, value: str) -> Path:
    """Paths in a sweep file are relative to the file (so a config works from any folder)."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path
