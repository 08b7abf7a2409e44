"""The graph catalogue (configs/graphs.toml) and ``resolve``: a catalogue name -> an edge-list file here.

Real graphs are looked for in the data folders (gzipped or not); stand-ins (``NAME~synth``)
are generated once per (name, scale, seed, generator version) and cached as text files.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from grader.data import synth
from grader.tomlfile import check_keys, read_toml
from sssp_common.edgelist import parsed_form, write_edge_list
from sssp_common.files import REPO_ROOT, cache_dir
from sssp_common.loader import remember_parsed
from sssp_common.textio import text_workers

CATALOGUE = REPO_ROOT / "configs" / "graphs.toml"
KINDS = ("snap", "real-local", "synth", "project")
REAL_KINDS = ("snap", "real-local")
SYNTH_SUFFIX = "~synth"
DEFAULT_CI_SCALE = {"road_like": 1 / 256, "rmat": 1 / 512}


class DatasetError(Exception):
    """A graph that cannot be had here: unknown name, absent file, bad scale. One clear line."""


@dataclass(frozen=True)
class Dataset:
    name: str
    kind: str
    url: str = ""
    filename: str = ""
    vertices: int = 0          # largest id + 1 (0 = unknown)
    edges: int = 0
    sha256: str = ""           # of the file as downloaded / stored
    description: str = ""
    nodes: int = 0             # SNAP's node count: distinct ids that appear
    size: int = 0              # bytes of the downloaded file (0 = unknown)
    content_sha256: str = ""   # of the uncompressed content
    lines: int = 0
    generator: str = ""
    standin_of: str = ""
    ci_scale: float = 0.0


def load_catalogue(path=None) -> dict[str, Dataset]:
    """Every catalogue entry by name; a malformed catalogue is a DatasetError naming the entry."""
    path = Path(path) if path is not None else CATALOGUE
    raw = read_toml(path, DatasetError, "catalogue file")
    known = set(Dataset.__dataclass_fields__) - {"name"}
    catalogue = {}
    for name, table in raw.get("graphs", {}).items():
        check_keys(table, known, f"graphs.{name}", DatasetError, path)
        entry = Dataset(name=name, **table)
        if entry.kind not in KINDS:
            raise DatasetError(f"{path}: graphs.{name}: kind must be one of {', '.join(KINDS)}, not {entry.kind!r}")
        if entry.kind == "synth" and not entry.standin_of:
            raise DatasetError(f"{path}: graphs.{name}: a synth entry needs standin_of")
        if entry.kind != "synth" and not entry.filename:
            raise DatasetError(f"{path}: graphs.{name}: needs a filename")
        catalogue[name] = entry
    return catalogue


def default_data_dirs() -> list[Path]:
    """Where real graphs are looked for, in order."""
    dirs = []
    if os.environ.get("SSSP_DATA_DIR"):
        dirs.append(Path(os.environ["SSSP_DATA_DIR"]))
    dirs += [REPO_ROOT / "data", REPO_ROOT.parent / "shared" / "data", REPO_ROOT / ".device-data"]
    return dirs


def default_cache_dir() -> Path:
    return cache_dir("synth")


def resolve(name: str, scale: str | float = "ci", data_dirs: list[Path] | None = None,
            cache_dir: Path | None = None, seed: int = 0, catalogue: dict[str, Dataset] | None = None) -> Path:
    """A path to an edge-list file for catalogue graph ``name``.

    ``scale`` applies to stand-ins only: "ci" (each entry's ci_scale: the default sweep's
    size for a 2-core CPU), "full" (the spec's size) or a fraction in (0, 1].
    """
    catalogue = catalogue if catalogue is not None else load_catalogue()
    entry = catalogue.get(name)
    if entry is None:
        raise DatasetError(f"unknown graph {name!r}; the catalogue has: {', '.join(catalogue)}")
    if entry.kind == "project":
        path = REPO_ROOT / entry.filename
        if not path.is_file():
            raise DatasetError(f"{name}: {path} is missing from this checkout")
        return path
    if entry.kind == "synth":
        return _synth_file(entry, scale, seed, cache_dir)
    found = find_real(entry, data_dirs)
    if found is None:
        where = ", ".join(str(d) for d in (data_dirs or default_data_dirs()))
        hint = (f"run `python -m grader fetch {name}` (needs a network)" if entry.kind == "snap"
                else "copy it into one of those folders")
        standin = f"{name}{SYNTH_SUFFIX}"
        also = f", or use the stand-in `{standin}`" if standin in catalogue else ""
        raise DatasetError(f"{name}: {entry.filename} not found in {where}; {hint}{also}")
    return found


def find_real(entry: Dataset, data_dirs: list[Path] | None = None) -> Path | None:
    """The first copy of a real graph in the data folders, gzipped or not."""
    stem = entry.filename[:-3] if entry.filename.endswith(".gz") else entry.filename
    for folder in data_dirs or default_data_dirs():
        for candidate in (Path(folder) / entry.filename, Path(folder) / stem, Path(folder) / f"{stem}.gz"):
            if candidate.is_file():
                return candidate
    return None


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
