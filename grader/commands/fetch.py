"""``python -m grader fetch NAME...``: download catalogue graphs, resumably, and verify them.

A download streams into ``<file>.part`` (:mod:`grader.data.download`: bytes capped at the
catalogue size plus a margin, an overall deadline, an idle timeout and a minimum rate,
same-host redirects only); a rerun resumes it with a Range request. The file takes its
final name only after its size, sha256 (the catalogue's, else the one its first verified
download recorded beside it: trust on first use), decompressed size and vertex/edge
counts are verified (:mod:`grader.data.integrity`), so nothing a later fetch would accept is
ever left by a failure. A ``.part`` survives only an interrupted transfer (a prefix of the
server's bytes at their own offsets, checked whole once complete); any failed check
deletes it. The .gz is kept as downloaded: the loader reads gzip directly.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from grader.data.datasets import Dataset, DatasetError, load_catalogue
from grader.data.download import FetchError, Limits, download
from grader.data.integrity import (check_bytes, check_lines, file_sha256, inspect, max_download_bytes, read_record,
                              record_path, verify_counts, write_record)
from sssp_common.files import REPO_ROOT

__all__ = ["FetchError", "Limits", "fetch_one", "run", "default_data_dir"]


def default_data_dir() -> Path:
    explicit = os.environ.get("SSSP_DATA_DIR")
    return Path(explicit) if explicit else REPO_ROOT / "data"


HELP = "download, verify and unpack catalogue graphs"


def add_arguments(parser) -> None:
    defaults = Limits()
    parser.add_argument("names", nargs="+", metavar="NAME", help="catalogue names, e.g. roadNet-CA (or all)")
    parser.add_argument("--data-dir", type=Path, metavar="DIR", help="where to put them")
    parser.add_argument("--force", action="store_true", help="download again even when present")
    parser.add_argument("--allow-redirect-host", action="store_true",
                        help="follow redirects to another host (refused by default)")
    parser.add_argument("--deadline", type=float, default=defaults.deadline_s, metavar="S",
                        help=f"give up on a graph after this many seconds (default {defaults.deadline_s:g})")
    parser.add_argument("--idle-timeout", type=float, default=defaults.idle_s, metavar="S",
                        help=f"give up when no byte arrives for this long (default {defaults.idle_s:g})")
    parser.add_argument("--min-rate", type=float, default=defaults.min_rate, metavar="BYTES_PER_S",
                        help=f"give up below this rate over {defaults.rate_window_s:g} s "
                             f"(default {defaults.min_rate:g})")


def run_from_args(args) -> int:
    limits = Limits(deadline_s=args.deadline, idle_s=args.idle_timeout, min_rate=args.min_rate,
                    allow_redirect_host=args.allow_redirect_host)
    return run(names=args.names, data_dir=args.data_dir, force=args.force, limits=limits)


def run(names: list[str], data_dir: Path | None = None, force: bool = False, catalogue: Path | None = None,
        out=sys.stderr, limits: Limits | None = None) -> int:
    """Fetch each named graph into ``data_dir``; 0 when all are there and verified, else 1."""
    try:
        entries = load_catalogue(catalogue)
    except DatasetError as err:
        print(f"grader fetch: {err}", file=out)
        return 1
    fetchable = {name: entry for name, entry in entries.items() if entry.url}
    wanted = list(fetchable) if names == ["all"] else list(names)
    unknown = [name for name in wanted if name not in fetchable]
    if unknown:
        print(f"grader fetch: cannot fetch {', '.join(map(repr, unknown))}; "
              f"downloadable graphs: {', '.join(fetchable)} (or 'all')", file=out)
        return 1
    folder = Path(data_dir) if data_dir is not None else default_data_dir()
    status = 0
    for name in wanted:
        try:
            path = fetch_one(fetchable[name], folder, force=force, out=out, limits=limits)
            print(f"grader fetch: {name}: {path}", file=out)
        except FetchError as err:
            print(f"grader fetch: {name}: {err}", file=out)
            status = 1
        except KeyboardInterrupt:
            print(f"grader fetch: {name}: interrupted; run again to resume", file=out)
            return 130
    return status


def fetch_one(entry: Dataset, folder: Path, force: bool = False, out=sys.stderr,
              limits: Limits | None = None) -> Path:
    """The verified file for ``entry`` in ``folder``, downloaded unless a verified copy is there."""
    target = folder / entry.filename
    if target.is_file() and not force:
        return _check_present(entry, target, out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise FetchError(f"cannot create {folder}: {err.strerror or err}") from None
    part = folder / f"{entry.filename}.part"
    if force:
        part.unlink(missing_ok=True)
    _remove_stale_staging(folder, entry)
    recorded = read_record(target)  # a bad record stops us before the download, not after
    bounded = replace(limits or Limits(), max_bytes=max_download_bytes(entry))
    try:
        download(entry.url, part, bounded, out=out)
    except FetchError as err:
        if not err.interrupted:
            part.unlink(missing_ok=True)
        raise
    try:
        _install(entry, part, target, recorded, out)
    except FetchError as err:
        part.unlink(missing_ok=True)
        raise FetchError(f"{err}; the download was deleted") from None
    return target


def _install(entry: Dataset, part: Path, target: Path, recorded: str | None, out) -> None:
    """Verify the complete ``.part`` and only then give it its final name (and record its sha256)."""
    found = inspect(part, entry)
    vouched = check_bytes(entry, found, recorded)
    check_lines(entry, found)
    # the counts are parsed from a private folder, under the final name (the loader reads
    # gzip by its suffix), so nothing unverified ever sits where a fetch or a sweep looks
    staging = Path(tempfile.mkdtemp(prefix=_staging_prefix(entry), dir=part.parent))
    try:
        staged = staging / entry.filename
        os.replace(part, staged)
        verify_counts(entry, staged)
        os.replace(staged, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _say_trust(entry, target, found.sha256, vouched, out)


def _check_present(entry: Dataset, target: Path, out) -> Path:
    """A file already under the final name: checked against the catalogue's sha256 or the record;
    without either, verified like a download and then recorded. Never deleted: it may be the user's."""
    advice = "delete it or use --force"
    size = target.stat().st_size
    if entry.size and size != entry.size:
        raise FetchError(f"{target} exists but has {size:,} bytes, not {entry.size:,}; {advice}")
    recorded = read_record(target)
    expected = entry.sha256.lower() if entry.sha256 else recorded
    if expected:
        got = file_sha256(target)
        if got != expected:
            source = "the catalogue's" if entry.sha256 else f"the one recorded in {record_path(target)}"
            raise FetchError(f"{target} exists but its sha256 {got} is not {source} ({expected}); {advice}")
        print(f"grader fetch: {entry.name}: already present, sha256 checked", file=out)
        return target
    try:
        found = inspect(target, entry)
        vouched = check_bytes(entry, found, None)
        check_lines(entry, found)
        verify_counts(entry, target)
    except FetchError as err:
        raise FetchError(f"{target} exists but fails verification: {err}; {advice}") from None
    print(f"grader fetch: {entry.name}: already present, verified", file=out)
    _say_trust(entry, target, found.sha256, vouched, out)
    return target


def _say_trust(entry: Dataset, target: Path, sha256: str, vouched: str, out) -> None:
    if vouched:
        print(f"grader fetch: {entry.name}: {vouched}", file=out)
        return
    record = write_record(target, sha256)
    print(f"grader fetch: {entry.name}: no published sha256; recorded {sha256} in {record} "
          "(trust on first use: later fetches are checked against it)", file=out)


def _staging_prefix(entry: Dataset) -> str:
    return f".fetch-{entry.filename}."


def _remove_stale_staging(folder: Path, entry: Dataset) -> None:
    """A staging folder left by a killed fetch of this file (one fetch per folder at a time)."""
    for stale in folder.glob(_staging_prefix(entry) + "*"):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
