"""The grading config (configs/grading.toml): a sweep matrix plus a [grading] table (rubric,
build, unpacking limits, sandbox, timing-line patterns). Strict like the sweep's: an unknown
key stops with the file and key named."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from grader.grading.build import BuildOptions
from grader.grading.counterexamples import Settings
from grader.sweep.shrink import Budget
from grader.sweep.config import SweepConfig, _from_table, apply_overrides
from grader.tomlfile import ConfigError, check_keys, read_toml
from grader.grading.reruns import RULES
from grader.grading.rubric import Rubric, RubricError, load_rubric
from grader.jail.sandbox import Sandbox
from grader.grading.submission import Limits
from grader.sweep.timings import DEFAULT_PATTERNS, STAGES, Pattern, nested_quantifier

GRADING_KEYS = {"rubric", "build_timeout_s", "build_quota_mb", "max_submission_mb", "max_files", "sandbox", "patterns",
                "counterexamples", "mps", "reruns"}
COUNTEREXAMPLE_KEYS = {"share", "floor_s", "floor_runs", "max_runs", "max_seconds", "search_graphs", "tries"}
SANDBOX_KEYS = {f.name for f in fields(Sandbox)} - {"user", "env", "extra_path", "jail", "mps"}   # the jail: --unsafe only


@dataclass(frozen=True)
class Grading:
    matrix: SweepConfig
    rubric: Rubric
    rubric_path: Path
    build: BuildOptions
    limits: Limits
    sandbox: Sandbox
    patterns: tuple[Pattern, ...] = DEFAULT_PATTERNS
    counterexamples: Settings = field(default_factory=Settings)
    mps: bool = False               # each student's runs as clients of their own MPS daemon (grade --mps)
    reruns: str = "all"             # which runs a verdict needs (grader.grading.reruns.RULES)


@dataclass(frozen=True)
class GradeRun:
    """What the one runner (grader.sweep.cellrun.run_cell) reads of a 'sweep' when grading: picklable."""
    name: str
    command: str
    config_dir: Path
    timeout_s: float
    sentinels: tuple[int, ...]
    sandbox: Sandbox
    patterns: tuple[Pattern, ...]
    program_path: Path
    record_extra: dict = field(default_factory=dict)


def load_grading(path: Path | str, *, nvcc=None, arch=None, rubric: Path | str | None = None, **overrides) -> Grading:
    """rubric: a rubric file instead of the one [grading] names (e.g. configs/rubric-gate.toml)."""
    path = Path(path)
    raw = read_toml(path, ConfigError, "grading config")
    grading = raw.pop("grading", {})
    try:
        matrix = apply_overrides(_from_table(path, raw), **overrides)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
    if not isinstance(grading, dict):
        raise ConfigError(f"{path}: [grading] must be a table")
    check_keys(grading, GRADING_KEYS, "grading", path=path)
    rubric_path = Path(rubric) if rubric is not None else path.parent / grading.get("rubric", "rubric.toml")
    try:
        loaded = load_rubric(rubric_path)
    except RubricError as error:
        raise ConfigError(str(error)) from None
    if arch is not None and not re.fullmatch(r"(?:sm|compute)_\d+[a-z]?", arch):
        raise ConfigError(f"--arch: expected sm_XX (e.g. sm_90), got {arch!r}")
    build = BuildOptions(nvcc=nvcc, arch=arch, timeout_s=_number(grading, "build_timeout_s", 300, path),
                         quota_mb=int(_number(grading, "build_quota_mb", 4096, path)))
    limits = Limits(max_bytes=int(_number(grading, "max_submission_mb", 200, path)) << 20,
                    max_files=int(_number(grading, "max_files", 20000, path)))
    mps = grading.get("mps", False)
    if not isinstance(mps, bool):
        raise ConfigError(f"{path}: grading.mps must be true or false, got {mps!r}")
    return Grading(matrix, loaded, rubric_path, build, limits, _sandbox(grading.get("sandbox", {}), path),
                   _patterns(grading.get("patterns"), path), _counterexamples(grading.get("counterexamples", {}), path),
                   mps=mps, reruns=_reruns(grading.get("reruns", "all"), loaded, rubric_path, path))


def _reruns(rule, rubric: Rubric, rubric_path: Path, path: Path) -> str:
    """grading.reruns: one of RULES; "first-right" only where the rubric cannot be changed by the
    runs it skips (it scores each setting once, right at any configuration)."""
    if rule not in RULES:
        raise ConfigError(f"{path}: grading.reruns must be one of {', '.join(map(repr, RULES))}, got {rule!r}")
    if rule == "first-right" and rubric.configurations != "any":
        raise ConfigError(f"{path}: grading.reruns = \"first-right\" skips runs at other configurations, but "
                          f"{rubric_path} scores every configuration's run (correctness.configurations = "
                          f"\"{rubric.configurations}\"); use \"all\", or a rubric with configurations = \"any\"")
    return rule


def _counterexamples(table, path: Path) -> Settings:
    """[grading.counterexamples]: how much shrinking and random search may add (see Settings)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [grading.counterexamples] must be a table")
    check_keys(table, COUNTEREXAMPLE_KEYS, "grading.counterexamples", path=path)
    default = Settings()

    def value(key: str, fallback, least: float):
        got = table.get(key, fallback)
        if isinstance(got, bool) or not isinstance(got, (int, float)) or got < least:
            raise ConfigError(f"{path}: grading.counterexamples.{key} must be a number >= {least:g}, got {got!r}")
        return got

    return Settings(budget=Budget(runs=int(value("max_runs", default.budget.runs, 1)),
                                  seconds=value("max_seconds", default.budget.seconds, 0.1)),
                    search_graphs=int(value("search_graphs", default.search_graphs, 0)),
                    tries=int(value("tries", default.tries, 1)),
                    share=value("share", default.share, 0),
                    floor_runs=int(value("floor_runs", default.floor_runs, 0)),
                    floor_s=value("floor_s", default.floor_s, 0))


def _number(table: dict, key: str, default, path: Path) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{path}: grading.{key} must be a positive number, got {value!r}")
    return value


def _sandbox(table, path: Path) -> Sandbox:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [grading.sandbox] must be a table")
    check_keys(table, SANDBOX_KEYS, "grading.sandbox", path=path)
    values = dict(table)
    if "pass_env" in values:
        if not isinstance(values["pass_env"], list) or not all(isinstance(v, str) for v in values["pass_env"]):
            raise ConfigError(f"{path}: grading.sandbox.pass_env must be a list of variable names")
        values["pass_env"] = tuple(values["pass_env"])
    if values.get("address_space_gb") and values["address_space_gb"] < 16:
        raise ConfigError(f"{path}: grading.sandbox.address_space_gb below 16 breaks CUDA (0 turns it off)")
    return Sandbox(user="always", env="scrubbed", **values)


def _patterns(value, path: Path) -> tuple[Pattern, ...]:
    if value is None:
        return DEFAULT_PATTERNS
    if not isinstance(value, list):
        raise ConfigError(f"{path}: grading.patterns must be a list of [[grading.patterns]] tables")
    patterns = []
    for number, table in enumerate(value, 1):
        where = f"{path}: grading.patterns #{number}"
        if not isinstance(table, dict) or set(table) - {"name", "regex", "stage", "unit"} or \
                not {"name", "regex", "stage"} <= set(table):
            raise ConfigError(f"{where}: needs name, regex, stage (and optionally unit)")
        if table["stage"] not in STAGES:
            raise ConfigError(f"{where}: stage must be one of {', '.join(STAGES)}")
        try:
            compiled = re.compile(table["regex"])
        except re.error as error:
            raise ConfigError(f"{where}: bad regex: {error}") from None
        if "value" not in compiled.groupindex:
            raise ConfigError(f"{where}: the regex needs a (?P<value>...) group")
        nested = nested_quantifier(table["regex"])
        if nested:   # it runs on every line of hostile stdout: it must not backtrack exponentially
            raise ConfigError(f"{where}: the regex could take exponential time ({nested}); write it without")
        patterns.append(Pattern(table["name"], table["regex"], table["stage"], table.get("unit", "ms")))
    return tuple(patterns)
