"""The graph catalogue (configs/graphs.toml) as plain records, and where real graphs are looked for.

Pure reading: no graph is opened here (grader.data.datasets resolves and verifies; the fetch
command downloads). The two small real graphs the tests and the default configs need are
carried in this package (``graphs/``, see its PROVENANCE.md), so a fresh clone with no data
folder and no network still has them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from grader.tomlfile import check_keys, did_you_mean, read_toml
from sssp_common.files import REPO_ROOT

CATALOGUE = REPO_ROOT / "configs" / "graphs.toml"
CARRIED_DIR = Path(__file__).resolve().parent / "graphs"   # committed copies, verified like any other
KINDS = ("snap", "dimacs", "synth", "project")
REAL_KINDS = ("snap", "dimacs")
SYNTH_SUFFIX = "~synth"


class DatasetError(Exception):
    """A graph that cannot be had here: unknown name, absent or unverified file, bad scale. One clear line."""


@dataclass(frozen=True)
class Dataset:
    name: str
    kind: str
    url: str = ""
    filename: str = ""
    vertices: int = 0          # largest id + 1 (0 = unknown)
    edges: int = 0
    sha256: str = ""           # of the file as downloaded (the .gz bytes); "" = not pinned
    description: str = ""
    nodes: int = 0             # SNAP's node count: distinct ids that appear
    size: int = 0              # bytes of the downloaded file (0 = not pinned)
    content_sha256: str = ""   # of the uncompressed content: any gzip of it verifies
    content_size: int = 0      # bytes of the uncompressed content (0 = not pinned)
    lines: int = 0
    generator: str = ""
    standin_of: str = ""
    ci_scale: float = 0.0

    @property
    def pinned(self) -> bool:
        """Does the catalogue itself say which bytes this graph is?"""
        return bool(self.content_sha256 or self.sha256)


def load_catalogue(path=None) -> dict[str, Dataset]:
    """Every catalogue entry by name; a malformed catalogue is a DatasetError naming the entry."""
    path = Path(path) if path is not None else CATALOGUE
    raw = read_toml(path, DatasetError, "catalogue file")
    known = set(Dataset.__dataclass_fields__) - {"name"}
    catalogue = {}
    for name, table in raw.get("graphs", {}).items():
        check_keys(table, known, f"graphs.{name}", DatasetError, path)
        entry = Dataset(name=name, **table)
        where = f"{path}: graphs.{name}"
        if entry.kind not in KINDS:
            raise DatasetError(f"{where}: kind must be one of {', '.join(KINDS)}, not {entry.kind!r}"
                               f"{did_you_mean(entry.kind, KINDS)}")
        if entry.kind == "synth" and not entry.standin_of:
            raise DatasetError(f"{where}: a synth entry needs standin_of")
        if entry.kind != "synth" and not entry.filename:
            raise DatasetError(f"{where}: needs a filename")
        for key in ("sha256", "content_sha256"):
            value = getattr(entry, key)
            if value and (len(value) != 64 or any(c not in "0123456789abcdef" for c in value.lower())):
                raise DatasetError(f"{where}.{key}: not a sha256 (64 hex digits): {value!r}")
        catalogue[name] = entry
    return catalogue


def unknown_graph(name: str, catalogue: dict[str, Dataset]) -> str:
    """The one line for a name the catalogue lacks, with the nearest it has."""
    hint = did_you_mean(name, list(catalogue))
    return f"unknown graph {name!r}{hint}" + ("" if hint else f"; the catalogue has: {', '.join(catalogue)}")


def default_data_dirs() -> list[Path]:
    """Where real graphs are looked for, in order, before the carried copies:
    $SSSP_DATA_DIR, ./data (where `grader fetch` puts them) and .device-data (the copy a GPU
    machine is handed)."""
    dirs = []
    if os.environ.get("SSSP_DATA_DIR"):
        dirs.append(Path(os.environ["SSSP_DATA_DIR"]))
    return dirs + [REPO_ROOT / "data", REPO_ROOT / ".device-data"]


def search_dirs(data_dirs=None) -> list[Path]:
    """The data folders (the given ones, else the defaults), then the carried copies, always."""
    folders = [Path(d) for d in (data_dirs or default_data_dirs())]
    return folders + ([CARRIED_DIR] if CARRIED_DIR not in folders else [])


def candidates(entry: Dataset, folder: Path) -> list[Path]:
    """The names a copy of ``entry`` may have in ``folder``: as downloaded, gzipped or not."""
    stem = entry.filename[:-3] if entry.filename.endswith(".gz") else entry.filename
    return [Path(folder) / name for name in dict.fromkeys((entry.filename, stem, f"{stem}.gz"))]


def find_real(entry: Dataset, data_dirs=None) -> Path | None:
    """The first copy of a real graph in the data folders or the carried ones (not yet verified)."""
    for folder in search_dirs(data_dirs):
        for candidate in candidates(entry, folder):
            if candidate.is_file():
                return candidate
    return None
