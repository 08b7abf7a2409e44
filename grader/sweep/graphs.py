"""One graph of a sweep made ready to run: resolved (a file or a catalogue name), written in the
spec's input format once per ordering (read-only, identity kept), and its reference computed on
exactly what the program reads (checksummed). Sweep and grade prepare graphs the same way."""
from __future__ import annotations

import gzip
import inspect
import signal
from dataclasses import dataclass, field
from pathlib import Path

from grader.data import inputs
from grader.jail.sandbox import shared_inputs
from grader.sweep import cellrun
from grader.sweep.cells import graph_label, looks_like_path
from grader.sweep.config import SweepConfig
from grader.tomlfile import ConfigError
from sssp_common.digest import distances_checksum


class GraphUnavailable(Exception):
    """This graph cannot be swept here (not downloaded, unreadable, no reference); its cells are skipped."""


@dataclass
class PreparedGraph:
    name: str
    path: Path
    reference: object            # np.ndarray of int64 distances
    edges: int
    ordered: dict[str, Path] = field(default_factory=dict)
    reference_checksum: str = ""     # checked before use (grader.sweep.cellrun: once per process for a frozen reference)
    identities: dict = field(default_factory=dict)   # ordering -> the input file's identity, checked before every run

    @property
    def vertices(self) -> int:
        return int(self.reference.shape[0])


def prepare_graph(entry: str, sweep: SweepConfig, orderings: set[str], cache_dir: Path | None) -> PreparedGraph:
    """Resolve the graph; write its spec-format inputs (plain `src dst w` text, one per ordering,
    cached by content) and expose them read-only; compute the reference on exactly what the
    program reads (cached by content; its checksum kept and checked before every run)."""
    name = graph_label(entry)
    path = resolve_graph(entry, sweep, cache_dir)
    import reference
    folder = Path(cache_dir) / "inputs" if cache_dir else None
    try:
        given = inputs.spec_input(path, "given", folder)
    except Exception as error:
        raise GraphUnavailable(f"cannot write the spec-format input for {path}: {type(error).__name__}: {error}") from None
    try:
        distances = _call(reference.distances, given, cache_dir=cache_dir)
    except Exception as error:  # a reference that cannot be had: skip the graph, say why
        raise GraphUnavailable(f"no reference for {path}: {type(error).__name__}: {error}") from None
    shown = shared_inputs()
    ordered, identities = {}, {}
    for ordering in sorted(orderings):
        try:
            ordered[ordering] = inputs.expose(inputs.spec_input(path, ordering, folder), shown)
        except Exception as error:
            raise GraphUnavailable(f"cannot write the {ordering} ordering: {type(error).__name__}: {error}") from None
        identities[ordering] = inputs.identity(ordered[ordering])
    cellrun.keep_private(cache_dir)
    distances = cellrun.freeze(distances)
    return PreparedGraph(name=name, path=path, reference=distances, edges=count_edges(given), ordered=ordered,
                         reference_checksum=distances_checksum(distances), identities=identities)


def check_available(sweep: SweepConfig) -> None:
    """Every graph of the matrix is here: a file entry exists, a catalogue graph has a copy that
    verifies (or is a stand-in); else ConfigError naming the config, the graph and the command that
    fetches it. Asked before anything runs or is listed, so a missing graph never shrinks a grade."""
    from grader.data import datasets
    catalogue = datasets.load_catalogue()
    for entry in sweep.graphs:
        if looks_like_path(entry):
            if not _file_candidates(entry, sweep):
                raise ConfigError(f"{sweep.path}: key 'graphs': no such file: {entry}")
            continue
        found = datasets.availability(catalogue[entry], list(sweep.data_dirs) or None, catalogue)
        if found.problem:
            raise ConfigError(f"{sweep.path}: key 'graphs': {found.problem}")


def _file_candidates(entry: str, sweep: SweepConfig) -> list[Path]:
    """A file entry: absolute, else relative to the config's folder, else to the current one."""
    candidates = [Path(entry).expanduser()] if Path(entry).is_absolute() else \
        [sweep.config_dir / entry, Path.cwd() / entry]
    return [candidate for candidate in candidates if candidate.is_file()]


def resolve_graph(entry: str, sweep: SweepConfig, cache_dir: Path | None) -> Path:
    """A file entry (relative to the config's folder, else the current one) or a catalogue name."""
    if looks_like_path(entry):
        candidates = [Path(entry).expanduser()] if Path(entry).is_absolute() else \
            [sweep.config_dir / entry, Path.cwd() / entry]
        for candidate in candidates:
            if candidate.is_file():
                return candidate.resolve()
        raise GraphUnavailable(f"no such file: {candidates[0]}")
    try:
        from grader.data import datasets
    except ImportError as error:
        raise GraphUnavailable(f"the graph catalogue is not available ({error})") from None
    try:
        return Path(_call(datasets.resolve, entry, scale=sweep.scale,
                          data_dirs=list(sweep.data_dirs) or None, cache_dir=cache_dir))
    except datasets.DatasetError as error:
        raise GraphUnavailable(str(error)) from None
    except Exception as error:
        raise GraphUnavailable(f"{type(error).__name__}: {error}") from None


def _call(function, *args, **kwargs):
    """Pass keyword arguments (cache_dir, data_dirs, ...) only to functions that take them:
    the contract allows either; a None cache_dir is left to the callee's default."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return function(*args, **{k: v for k, v in kwargs.items() if v is not None})
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    kwargs = {key: value for key, value in kwargs.items()
              if (open_ended or key in parameters) and not (key == "cache_dir" and value is None)}
    return function(*args, **kwargs)


def count_edges(path: Path) -> int:
    """Edge lines of a SNAP list (not blank, not a comment) or of a DIMACS .gr ('a' lines),
    gzipped or not, counted in big byte chunks (seconds for LiveJournal, not minutes)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    dimacs = ".gr" in Path(path).name
    count, previous = 0, b"\n"
    with opener(path, "rb") as handle:
        while chunk := handle.read(1 << 24):
            text = previous + chunk          # the byte before lets a line start straddle chunks
            if dimacs:
                count += text.count(b"\na")
            else:
                count += text[:-1].count(b"\n") - sum(text.count(b"\n" + c) for c in (b"#", b"%", b"\n", b"\r"))
            previous = chunk[-1:]
    return count


def sigterm_as_interrupt():
    """A batch system's SIGTERM stops the sweep as Ctrl-C does (program killed, rows kept);
    returns the handler to restore, None where signals cannot be set (not the main thread)."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:
        return None
