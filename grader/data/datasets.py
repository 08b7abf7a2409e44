"""``resolve``: a catalogue name -> an edge-list file here, verified before it is used.

Real graphs are looked for in the data folders, then among the copies carried in this package
(grader.data.catalogue), gzipped or not, and checked against the catalogue's pins
(grader.data.integrity.verify_copy) every time they are resolved; stand-ins (``NAME~synth``) are
generated once per (name, scale, seed, generator version) and cached as text files.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.data import synth
from grader.data.catalogue import (CARRIED_DIR, CATALOGUE, KINDS, REAL_KINDS, SYNTH_SUFFIX, Dataset,  # noqa: F401
                                   DatasetError, default_data_dirs, find_real, load_catalogue, search_dirs,
                                   unknown_graph)
from grader.data.download import FetchError
from grader.data.integrity import verify_copy
from sssp_common.edgelist import parsed_form, write_edge_list
from sssp_common.files import REPO_ROOT, cache_dir
from sssp_common.loader import remember_parsed
from sssp_common.textio import text_workers

DEFAULT_CI_SCALE = {"road_like": 1 / 256, "rmat": 1 / 512}


@dataclass(frozen=True)
class Availability:
    """Whether a catalogue graph can be used here, and where (before anything runs)."""
    name: str
    path: Path | None      # the verified copy, or None for a stand-in (generated on use)
    problem: str = ""      # one line with what to do, when it cannot be used


def default_cache_dir() -> Path:
    return cache_dir("synth")


def resolve(name: str, scale: str | float = "ci", data_dirs: list[Path] | None = None,
            cache_dir: Path | None = None, seed: int = 0, catalogue: dict[str, Dataset] | None = None) -> Path:
    """A path to an edge-list file for catalogue graph ``name``; a real graph's copy verified first.

    ``scale`` applies to stand-ins only: "ci" (each entry's ci_scale: the default sweep's
    size for a 2-core CPU), "full" (the spec's size) or a fraction in (0, 1].
    """
    catalogue = catalogue if catalogue is not None else load_catalogue()
    entry = catalogue.get(name)
    if entry is None:
        raise DatasetError(unknown_graph(name, catalogue))
    if entry.kind == "synth":
        return _synth_file(entry, scale, seed, cache_dir)
    found = availability(entry, data_dirs, catalogue)
    if found.problem:
        raise DatasetError(found.problem)
    return found.path


def availability(entry: Dataset, data_dirs: list[Path] | None = None,
                 catalogue: dict[str, Dataset] | None = None) -> Availability:
    """Can ``entry`` be used here? A project file must be in the checkout; a real graph must have a
    copy that verifies (the first found: a bad copy is named, never passed over); a stand-in can."""
    if entry.kind == "synth":
        return Availability(entry.name, None)
    if entry.kind == "project":
        path = REPO_ROOT / entry.filename
        if not path.is_file():
            return Availability(entry.name, None, f"{entry.name}: {path} is missing from this checkout")
        return Availability(entry.name, path)
    fetch = f"python -m grader fetch {entry.name}"
    found = find_real(entry, data_dirs)
    if found is None:
        where = ", ".join(str(d) for d in search_dirs(data_dirs))
        standin = f"{entry.name}{SYNTH_SUFFIX}"
        also = f", or use the stand-in `{standin}`" if standin in (catalogue or {}) else ""
        return Availability(entry.name, None, f"{entry.name}: {entry.filename} not found in {where}; "
                                              f"run `{fetch}` (needs a network){also}")
    try:
        verify_copy(entry, found)
    except FetchError as err:
        return Availability(entry.name, None, f"{entry.name}: {found} fails verification: {err}; run "
                                              f"`{fetch} --data-dir {found.parent}` (it verifies, records or "
                                              f"replaces it; --force downloads again)")
    return Availability(entry.name, found)


def scale_fraction(entry: Dataset, scale: str | float) -> float | str:
    """"full", or the fraction a named/numeric scale means for this stand-in."""
    if isinstance(scale, str):
        if scale == "full":
            return "full"
        if scale == "ci":
            return entry.ci_scale or DEFAULT_CI_SCALE.get(entry.generator, 1 / 512)
        try:
            scale = float(scale)
        except ValueError:
            raise DatasetError(f"scale must be ci, full or a fraction, not {scale!r}") from None
    scale = float(scale)
    if not 0 < scale <= 1:
        raise DatasetError(f"scale must be in (0, 1], not {scale}")
    return "full" if scale == 1 else scale


def scale_tag(fraction: float | str) -> str:
    """A file-name-safe spelling of a scale: full, or 1-256 for 1/256, else a decimal."""
    if fraction == "full":
        return "full"
    inverse = 1 / float(fraction)
    if abs(inverse - round(inverse)) < 1e-9:
        return f"1-{round(inverse)}"
    return f"{float(fraction):.6g}"


def _synth_file(entry: Dataset, scale, seed: int, cache_dir: Path | None) -> Path:
    fraction = scale_fraction(entry, scale)
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = folder / f"{entry.name}.{scale_tag(fraction)}.seed{seed}.v{synth.GENERATOR_VERSION}.txt"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    graph = synth.standin(entry.standin_of, scale=fraction, seed=seed)
    write_edge_list(path, graph, header=f"{entry.name}: {entry.description}\n"
                                              f"generator {entry.generator} v{synth.GENERATOR_VERSION}, "
                                              f"scale {fraction}, seed {seed}", workers=text_workers())
    remember_parsed(path, parsed_form(graph))   # its first load (the orderings' writer's) parses nothing
    return path
