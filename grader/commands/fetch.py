"""``python -m grader fetch NAME...|--config FILE``: download catalogue graphs, resumably, and verify them.

``--config FILE`` fetches every real graph a sweep or grading config names (stand-ins are
generated on use; files are the config's own). A graph with a verified copy in the data
folder, or carried in this checkout (grader/data/graphs), is not downloaded again.

A download streams into ``<file>.part`` (:mod:`grader.data.download`: bytes capped at the
catalogue size plus a margin, an overall deadline, an idle timeout and a minimum rate,
same-host redirects only); a rerun resumes it with a Range request. The file takes its
final name only after its size, sha256 (the catalogue's, else the one its first verified
download recorded beside it: trust on first use), decompressed size and vertex/edge
counts are verified (:mod:`grader.data.integrity`), so nothing a later fetch would accept is
ever left by a failure. A ``.part`` survives only an interrupted transfer (a prefix of the
server's bytes at their own offsets, checked whole once complete); any failed check
deletes it. The .gz is kept as downloaded: the loader reads gzip directly. Transient failures
are retried (resuming) within the deadline; the bar shows the bytes (grader.data.download).
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from grader.data.catalogue import CARRIED_DIR, REAL_KINDS, Dataset, DatasetError, candidates, load_catalogue
from grader.data.download import FetchError, Limits, download
from grader.data.integrity import (check_bytes, check_lines, inspect, max_download_bytes, read_record, verify_copy,
                                   verify_counts, write_record)
from grader.sweep.config import ConfigError, load_matrix, looks_like_path
from grader.tomlfile import did_you_mean
from sssp_common.files import REPO_ROOT

__all__ = ["FetchError", "Limits", "fetch_one", "run", "default_data_dir"]


def default_data_dir() -> Path:
    explicit = os.environ.get("SSSP_DATA_DIR")
    return Path(explicit) if explicit else REPO_ROOT / "data"


HELP = "download, verify and unpack catalogue graphs"


def add_arguments(parser) -> None:
    defaults = Limits()
    parser.add_argument("names", nargs="*", metavar="NAME", help="catalogue names, e.g. roadNet-CA (or all)")
    parser.add_argument("--config", type=Path, action="append", metavar="FILE",
                        help="every real graph this sweep or grading config names (may be repeated)")
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
    parser.add_argument("--retries", type=int, default=defaults.retries, metavar="N",
                        help=f"tries after a transient failure, each resuming (default {defaults.retries})")


def run_from_args(args) -> int:
    limits = Limits(deadline_s=args.deadline, idle_s=args.idle_timeout, min_rate=args.min_rate,
                    allow_redirect_host=args.allow_redirect_host, retries=max(0, args.retries))
    return run(names=args.names, data_dir=args.data_dir, force=args.force, limits=limits, configs=args.config)


def run(names: list[str], data_dir: Path | None = None, force: bool = False, catalogue: Path | None = None,
        out=sys.stderr, limits: Limits | None = None, configs: list[Path] | None = None) -> int:
    """Fetch each named graph (and each real graph of ``configs``) into ``data_dir``; 0 when all are
    there and verified, 1 when some could not be had, 2 for an unknown name or a bad config."""
    try:
        entries = load_catalogue(catalogue)
    except DatasetError as err:
        print(f"grader fetch: {err}", file=out)
        return 2
    fetchable = {name: entry for name, entry in entries.items() if entry.url}
    wanted = list(fetchable) if names == ["all"] else list(names)
    for config in configs or []:
        try:
            wanted += _config_graphs(config, entries, out)
        except ConfigError as err:
            print(f"grader fetch: {err}", file=out)
            return 2
    if not wanted and not configs:
        print("grader fetch: name graphs (or all), or --config FILE", file=out)
        return 2
    unknown = [name for name in wanted if name not in fetchable]
    if unknown:
        print(f"grader fetch: cannot fetch {', '.join(map(repr, unknown))}"
              f"{did_you_mean(unknown[0], fetchable)} (downloadable: {', '.join(fetchable)}, or 'all')", file=out)
        return 2
    folder = Path(data_dir) if data_dir is not None else default_data_dir()
    status = 0
    for name in dict.fromkeys(wanted):
        try:
            path = _carried(fetchable[name], folder, force, out) or \
                fetch_one(fetchable[name], folder, force=force, out=out, limits=limits)
            print(f"grader fetch: {name}: {path}", file=out)
        except FetchError as err:
            print(f"grader fetch: {name}: {err}", file=out)
            status = 1
        except KeyboardInterrupt:
            print(f"grader fetch: {name}: interrupted; run again to resume", file=out)
            return 130
    return status


def _config_graphs(path: Path, entries: dict[str, Dataset], out) -> list[str]:
    """The real catalogue graphs a config names (its names checked as a sweep checks them)."""
    matrix = load_matrix(path)
    names = []
    for graph in matrix.graphs:
        entry = None if looks_like_path(graph) else entries.get(graph)
        if entry is not None and entry.kind in REAL_KINDS:
            names.append(graph)
        else:
            why = "a file of the config's" if entry is None else \
                "a stand-in, generated on use" if entry.kind == "synth" else "in this checkout"
            print(f"grader fetch: {graph}: nothing to fetch ({why})", file=out)
    return names


def _carried(entry: Dataset, folder: Path, force: bool, out) -> Path | None:
    """The copy carried in this checkout, verified, when the data folder has none (and no --force)."""
    if force or any(candidate.exists() for candidate in candidates(entry, folder)):
        return None
    for candidate in candidates(entry, CARRIED_DIR):
        if candidate.is_file():
            try:
                vouched = verify_copy(entry, candidate)
            except FetchError as err:
                print(f"grader fetch: {entry.name}: the carried copy {candidate} fails verification ({err}); "
                      "downloading", file=out)
                return None
            print(f"grader fetch: {entry.name}: carried in this checkout ({vouched})", file=out)
            return candidate
    return None


def fetch_one(entry: Dataset, folder: Path, force: bool = False, out=sys.stderr,
              limits: Limits | None = None) -> Path:
    """The verified file for ``entry`` in ``folder``, downloaded unless a verified copy is there."""
    present = next((c for c in candidates(entry, folder) if c.is_file()), None)   # as downloaded, or (un)gzipped
    if present is not None and not force:
        return _check_present(entry, present, out)
    target = folder / entry.filename
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
    """A file already under the final name: checked against the catalogue's pins or the record;
    without either, verified like a download and then recorded. Never deleted: it may be the user's."""
    advice = "delete it or use --force"
    as_downloaded = target.name == entry.filename
    size = target.stat().st_size
    if as_downloaded and entry.size and size != entry.size:   # before hashing a large wrong file
        raise FetchError(f"{target} exists but has {size:,} bytes, not {entry.size:,}; {advice}")
    recorded = read_record(target)
    found = None
    try:
        found = inspect(target, entry)
        vouched = check_bytes(entry, found, recorded, as_downloaded)
        check_lines(entry, found)
        if not vouched:
            verify_counts(entry, target)
    except FetchError as err:
        if found is not None and recorded and not entry.pinned and found.sha256 != recorded:
            raise FetchError(f"{target} exists but its sha256 {found.sha256} is not the one recorded in "
                             f"{target.name}.sha256 ({recorded}); {advice}") from None
        raise FetchError(f"{target} exists but fails verification: {err}; {advice}") from None
    print(f"grader fetch: {entry.name}: already present, {vouched or 'verified'}", file=out)
    if not vouched:
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
