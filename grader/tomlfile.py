"""Strict TOML reading shared by every grader file format (sweep matrices, grading settings,
rubrics, the graph catalogue): a missing, malformed or misspelt file stops with one line naming
the file and the key. A leaf: it imports nothing of the grader's."""
from __future__ import annotations

import difflib
import tomllib
from pathlib import Path


class ConfigError(Exception):
    """A sweep file that cannot be run as written; the message names the file and key."""


def read_toml(path: Path, error_class: type[Exception] = ConfigError, what: str = "sweep config") -> dict:
    """The TOML file at ``path`` as a dict; a missing, unreadable or malformed file is one
    ``error_class`` line naming the file (``what``: the kind of file, for "no such ...")."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error_class(f"{path}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise error_class(f"{path}: cannot read: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise error_class(f"{path}: not valid TOML: {error}") from None


def check_keys(table: dict, known, where: str = "", error_class: type[Exception] = ConfigError,
               path: Path | None = None) -> None:
    """Stops at any key of ``table`` outside ``known``, naming each as WHERE.KEY (a typo would
    otherwise quietly mean the default); ``path``, when given, leads the message."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        prefix = f"{where}." if where else ""
        lead = f"{path}: " if path is not None else ""
        hint = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
        raise error_class(f"{lead}unknown key(s) {', '.join(prefix + key for key in unknown)} "
                          f"(known: {', '.join(sorted(known))}){hint}")


def did_you_mean(word: str, choices) -> str:
    """"; did you mean 'tpe'?" for the nearest of ``choices``, else "": a choice with the same
    letters first (two swapped: "tep", "bfm"), then difflib's closest (ratio >= 0.6)."""
    word, choices = str(word), [str(c) for c in choices]
    swapped = [c for c in choices if sorted(c.lower()) == sorted(word.lower()) and c != word]
    nearest = swapped[:1] or difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean {nearest[0]!r}?" if nearest else ""
