"""Who may read the grader's output folder: nobody but the grader while it grades, then whom
the staff choose (`grade --share`).

Why: the class's files (every student's results.json, build.json, build log and page, the
gradebook, the run records) once were world-readable while grading, and a student's program
printed its classmates' scores into its own feedback. Jails already hide the folder from every
build and run; this keeps it private from every other account on the machine as well.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

SHARE_CHOICES = ("none", "group", "all")
_MODES = {   # (folders, files)
    "none": (0o700, 0o600),
    "group": (0o750, 0o640),
    "all": (0o755, 0o644),
}


def set_access(out: Path, share: str) -> None:
    """Give out, every folder under it and every regular file in them the modes `share` asks
    for ('none': the grader's user only). Links are left alone (never followed)."""
    if share not in _MODES:
        raise ValueError(f"share must be one of {', '.join(SHARE_CHOICES)}, not {share!r}")
    folders, files = _MODES[share]
    _chmod(out, folders)
    for top, dirs, names in os.walk(out):
        for name in dirs:
            _chmod(Path(top, name), folders)
        for name in names:
            path = Path(top, name)
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    os.chmod(path, files)
            except OSError:
                pass


def _chmod(folder: Path, mode: int) -> None:
    try:
        if not os.path.islink(folder):
            os.chmod(folder, mode)
    except OSError:
        pass
