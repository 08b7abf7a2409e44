"""Two file habits every part of the project shares: whole-or-absent writes and cache folders."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_writer(path, mode: str = "w"):
    """Yield a stream on a temporary file beside ``path``; rename it over ``path`` only when
    the block ends without an exception, so readers see the whole file or none."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as stream:
            yield stream
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def cache_dir(env_var: str, name: str) -> Path:
    """``$env_var`` if set, else ``$XDG_CACHE_HOME/sssp-gpu/<name>`` (``~/.cache`` by default)."""
    explicit = os.environ.get(env_var)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sssp-gpu" / name
