"""Which program a run belongs to, by what it is rather than what it is called.

Run ids are keyed by this identity (sssp_common.record.run_id takes it first), so a resumed
sweep or grade never reuses another program's runs and a changed program runs again:

- the project's own ``./sssp`` (``{sssp}`` in the template): ``project@<commit>[+dirty]``;
- any other ``--program`` template: ``program@<digest>`` of the template's text and of every
  file it names (its first token resolved on PATH; ``{python}`` is this Python);
- a submission: ``submission@<digest>`` of its unpacked tree (paths, modes, bytes), the build
  options and the template (grader.grading.submission).
"""
from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import sys
from pathlib import Path

from sssp_common.digest import file_digest
from sssp_common.record import project_commit


def template_identity(template: str, config_dir: Path | None = None, sssp: Path | None = None) -> str:
    try:
        tokens = shlex.split(template)
    except ValueError:
        tokens = template.split()
    if tokens and tokens[0] == "{sssp}" and sssp is None:
        return f"project@{project_commit()}"
    parts: list = [template]
    for index, token in enumerate(tokens):
        path = _named_file(token, index == 0, config_dir, sssp)
        if path is not None:
            parts.append([str(path), file_digest(path)])
    return "program@" + hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]


def _named_file(token: str, first: bool, config_dir: Path | None, sssp: Path | None) -> Path | None:
    token = token.replace("{python}", sys.executable).replace("{config_dir}", str(config_dir or Path.cwd()))
    if sssp is not None:
        token = token.replace("{sssp}", str(sssp))
    if "{" in token:
        return None
    if "/" not in token:
        found = shutil.which(token) if first else None
        return Path(found) if found else None
    path = Path(token)
    if not path.is_absolute():
        path = (config_dir or Path.cwd()) / path
    return path if path.is_file() else None


def tree_digest(root: Path) -> str:
    """Every file and link under root, by relative path, mode and content."""
    hasher = hashlib.sha256()
    for path in sorted(Path(root).rglob("*")):
        relative = path.relative_to(root).as_posix()
        info = path.lstat()
        if path.is_symlink():
            entry = ["link", relative, str(path.readlink())]
        elif path.is_file():
            entry = ["file", relative, oct(info.st_mode & 0o111), file_digest(path)]
        elif path.is_dir():
            entry = ["dir", relative]
        else:
            entry = ["other", relative]
        hasher.update(json.dumps(entry).encode() + b"\n")
    return hasher.hexdigest()
