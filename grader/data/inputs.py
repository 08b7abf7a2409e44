"""The input every run gets: the spec's format, made once per graph content and ordering,
read-only to the program.

The spec: "a plain text file that contains only edges", `src dst [weight]` per line. So a
`.gz` is decompressed, a DIMACS `.gr` (ids from 1, `a u v w` lines) becomes 0-based
`src dst w` lines, no comment lines are written, and the weight is always there. Files are
cached by the source's content digest (cache_dir("inputs")); a run sees a hard link (or a
copy) in the grader's session folder, owned by the grader, mode 0444, in a folder the
program cannot write, and its identity (size, inode, times) is checked before every run.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from sssp_common.digest import file_digest, file_identity
from sssp_common.files import atomic_writer, cache_dir
from sssp_common.loader import load_graph
from sssp_common.textio import text_workers, write_rows
from sssp_common.vocabulary import ORDERINGS

FORMAT_VERSION = 1


def sort_order(src: np.ndarray, dst: np.ndarray, ordering: str) -> np.ndarray | None:
    """Stable permutation: by (src, dst) for source, (dst, src) for destination; None for given."""
    if ordering == "given":
        return None
    if ordering == "source":
        return np.lexsort((dst, src))
    if ordering == "destination":
        return np.lexsort((src, dst))
    raise ValueError(f"unknown ordering {ordering!r}; choose from {', '.join(ORDERINGS)}")


def spec_input(path: Path | str, ordering: str, folder: Path | None = None) -> Path:
    """The cached spec-format file for `path` in `ordering` (written on first use)."""
    path = Path(path)
    folder = Path(folder) if folder is not None else cache_dir("inputs")
    target = folder / f"{file_digest(path)[:40]}.{ordering}.spec{FORMAT_VERSION}.txt"
    if target.is_file():
        return target
    graph = load_graph(path)
    order = sort_order(graph.src, graph.dst, ordering)
    if order is not None:
        graph = graph.reordered(order)
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_writer(target, "wb") as stream:
        write_rows(stream, [graph.src, graph.dst, graph.w], b" ", workers=text_workers())
    os.chmod(target, 0o444)
    return target


def identity(path: Path | str) -> list:
    """What must not change between an input's preparation and each run: path, size, inode,
    modification time, mode, and the content's digest.

    Not the change time as such: an exposed input is a hard link into some grader's cache,
    so its ctime moves whenever another link to that inode comes or goes (a finished test
    session's folder deleted by the next session, a cache cleared), and a grade running
    beside them failed with "changed since it was written". The digest is memoised under
    the full stat identity, ctime included, so a moved ctime costs one rehash and catches a
    rewrite whose modification time was set back."""
    path = Path(path)
    mode = path.stat().st_mode
    return file_identity(path)[:4] + [oct(mode), file_digest(path)]


def expose(source: Path, folder: Path) -> Path:
    """`source` as a read-only file in `folder` (0755, the grader's): a hard link, else a copy.
    Files are named by content digest, so graders sharing the folder agree on every name."""
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    target = folder / source.name
    if target.exists():
        try:
            if os.path.samefile(target, source) or file_digest(target) == file_digest(source):
                if os.stat(target).st_mode & 0o777 != 0o444:   # a needless chmod would move ctime,
                    os.chmod(target, 0o444)                    # which other graders' runs check
                return target
        except OSError:
            pass
        target.unlink()
    try:
        os.link(source, target)
    except FileExistsError:                    # another grader linked it a moment ago
        if file_digest(target) != file_digest(source):
            raise
    except OSError:
        temporary = folder / f".{source.name}.tmp"
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    os.chmod(target, 0o444)
    return target
