"""What each graph of a report is: the real file, or a stand-in at some fraction of the real size.

Why: a stand-in of roadNet-CA at the default scale has 7,677 vertices against the real
graph's 1.97M; a report that does not say so invites readers to compare its times with
published ones. The catalogue (configs/graphs.toml) holds the real graphs' sizes; the
results hold the sizes as run.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from sssp_common.files import REPO_ROOT

CATALOGUE = REPO_ROOT / "configs" / "graphs.toml"
STANDIN_SUFFIX = "~synth"
# rmat: grader.data.synth v2 joins R-MAT's isolated vertices (one edge in, one out), so a stand-in is
# one weak component as SNAP's social graphs are (LiveJournal: 99.2%; SNAP: 99.9%); v1 left 42% isolated
GENERATORS = {"road_like": "road-like", "rmat": "R-MAT, isolated vertices joined"}


def load_catalogue(path: Path = CATALOGUE) -> dict:
    """{name: entry} from the catalogue, {} when it is missing or unreadable (the report still renders)."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8")).get("graphs", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


@dataclass(frozen=True)
class GraphInfo:
    name: str
    vertices: int | None
    edges: int | None
    kind: str                 # 'real file', 'stand-in (R-MAT, ...)', 'project file', 'file'
    standin: bool
    real_name: str = ""
    real_vertices: int | None = None
    real_edges: int | None = None

    @property
    def scale(self) -> float | None:
        """Edges as run / the real graph's edges, for stand-ins."""
        if not self.standin or not self.edges or not self.real_edges:
            return None
        return self.edges / self.real_edges

    @property
    def vertices_text(self) -> str:
        return f"{self.vertices:,}" if self.vertices is not None else "—"

    @property
    def edges_text(self) -> str:
        return f"{self.edges:,}" if self.edges is not None else "—"

    @property
    def real_text(self) -> str:
        if not self.standin:
            return "(this graph)" if self.kind == "real file" else "—"
        if self.real_vertices and self.real_edges:
            return f"{self.real_name}: {self.real_vertices:,} / {self.real_edges:,}"
        return self.real_name or "—"

    @property
    def status_text(self) -> str:
        """'road-like stand-in for roadNet-CA at 1/256 of its edges', 'the real graph', ..."""
        if self.standin:
            generator = self.kind[len("stand-in ("):-1] + " " if self.kind.startswith("stand-in (") else ""
            scale = self.scale
            at = ("" if scale is None else " at full size" if scale >= 0.95
                  else f" at 1/{1 / scale:.0f} of its edges")
            return f"{generator}stand-in for {self.real_name or 'a real graph'}{at}"
        return {"real file": "the real graph", "project file": "a project file"}.get(self.kind,
                                                                                    "a file not in the catalogue")

    @property
    def context_text(self) -> str:
        """'roadNet-CA~synth (stand-in ... of its edges)': the graph named with what it is."""
        return f"{self.name} ({self.status_text})"

    @property
    def scale_text(self) -> str:
        """'1/512 (0.195%)' for a stand-in, '1' for a real file, '—' when unknown."""
        if not self.standin:
            return "1" if self.kind == "real file" else "—"
        scale = self.scale
        if scale is None:
            return "—"
        if scale >= 0.95:
            return f"{scale:.2f}"
        return f"1/{1 / scale:.0f} ({scale * 100:.3g}%)"


def describe_graph(name: str, vertices: int | None, edges: int | None, catalogue: dict) -> GraphInfo:
    """Classify a graph by its name: `X~synth` is a stand-in for X, catalogue kinds say the rest."""
    entry = catalogue.get(name, {})
    if name.endswith(STANDIN_SUFFIX):
        real = entry.get("standin_of") or name[: -len(STANDIN_SUFFIX)]
        real_entry = catalogue.get(real, {})
        generator = GENERATORS.get(entry.get("generator", ""), entry.get("generator", ""))
        return GraphInfo(name, vertices, edges, f"stand-in ({generator})" if generator else "stand-in", True,
                         real, real_entry.get("vertices") or entry.get("vertices"),
                         real_entry.get("edges") or entry.get("edges"))
    kind = {"snap": "real file", "dimacs": "real file", "real-local": "real file", "project": "project file"}.get(entry.get("kind"), "file")
    return GraphInfo(name, vertices, edges, kind, False)


def describe_all(frame, catalogue: dict | None = None) -> dict[str, GraphInfo]:
    """GraphInfo of every graph in a results frame."""
    catalogue = load_catalogue() if catalogue is None else catalogue
    out = {}
    for graph, runs in frame.groupby("graph", sort=False):
        vertices = runs["graph_vertices"].dropna()
        edges = runs["graph_edges"].dropna()
        out[graph] = describe_graph(graph, int(vertices.iloc[0]) if len(vertices) else None,
                                    int(edges.iloc[0]) if len(edges) else None, catalogue)
    return out
