"""The student's report (the spec's `sssp_report.pdf`, "at least six pages, not including
references"): find it, count its pages and the pages before the references, and say so in
one line for the staff who grade it. pypdf is optional: without it the file is still found.

The PDF is the student's, so it is read in a child process with a time and memory limit: a
crafted file can make a parser slow or greedy, never the grader.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

from sssp_common.files import write_text_atomically

READ_TIMEOUT_S = 60
READ_MEMORY_BYTES = 2 << 30
MAX_PAGES_READ = 200            # text is read from at most this many pages
MAX_BYTES = 100 << 20           # a larger file is not read (a six-page paper is a few MiB)
# a heading alone on its line: "References", "7 References", "VII. REFERENCES", "Bibliography"
_HEADING = re.compile(r"(?im)^[ \t]*(?:(?:\d+|[IVXL]+)\.?[ \t]+)?(references|bibliography|works cited)[ \t]*:?[ \t]*$")


def find(tree: Path | None, beside: Path | None, name: str) -> tuple[Path | None, str]:
    """The report and how it was found: `beside` (handed in next to the package) first, then a
    file of that name (any case) inside the package, then the package's only PDF."""
    if beside is not None and beside.is_file() and not beside.is_symlink():
        return beside, "" if beside.name.lower().endswith(name.lower()) else f" (named {beside.name}, not {name})"
    if tree is None or not tree.is_dir():
        return None, ""
    pdfs = sorted((p for p in tree.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file() and not p.is_symlink()),
                  key=lambda p: (len(p.parts), str(p)))
    named = [p for p in pdfs if p.name.lower() == name.lower()]
    if named:
        return named[0], f" (inside the package, at {named[0].relative_to(tree)})"
    if len(pdfs) == 1:
        return pdfs[0], f" (inside the package, named {pdfs[0].relative_to(tree)}, not {name})"
    return None, f" ({len(pdfs)} other PDFs in the package: {', '.join(p.name for p in pdfs[:5])})" if pdfs else ""


def describe(path: Path | None, how: str, name: str, min_pages: int, memo: Path | None = None) -> dict:
    """{'found': one line for the report test, 'pages', 'body_pages'} (None where unknown)."""
    if path is None:
        return {"found": f"no {name} found{how}", "pages": None, "body_pages": None}
    counted = count_pages(path, memo)
    lead = f"{path.name} found{how}"
    if "error" in counted:
        return {"found": f"{lead}; {counted['error']}", "pages": None, "body_pages": None}
    pages, body, where = counted["pages"], counted["body_pages"], counted["references_page"]
    if where is None:
        text = f"{pages} pages; no references heading found, so all {pages} counted"
    else:
        text = f"{pages} pages; the references start on page {where}: about {body:g} pages before them"
    if counted.get("no_text"):
        text += " (no text could be read: a scanned or image-only PDF?)"
    if body is not None and body + 0.5 < min_pages:
        text += f", fewer than the spec's {min_pages}"
    return {"found": f"{lead}: {text}", "pages": pages, "body_pages": body}


def count_pages(path: Path, memo: Path | None = None) -> dict:
    """{'pages', 'body_pages', 'references_page', 'no_text'} or {'error': why}, read in a child.
    memo: a JSON file keeping the answer for this PDF's content, so a regrade reads it once."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        return {"error": f"it is {size >> 20} MiB, more than the {MAX_BYTES >> 20} MiB read: pages not counted"}
    with open(path, "rb") as stream:
        digest = hashlib.file_digest(stream, "sha256").hexdigest()
    if memo is not None:
        try:
            kept = json.loads(memo.read_text())
            if kept.get("sha256") == digest:
                return kept["counted"]
        except (OSError, ValueError, KeyError, AttributeError):
            pass
    counted = _count_in_child(path)
    if memo is not None and "error" not in counted:
        write_text_atomically(memo, json.dumps({"sha256": digest, "counted": counted}))
    return counted


def _count_in_child(path: Path) -> dict:
    try:
        done = subprocess.run([sys.executable, "-m", "grader.grading.reportpdf", str(path)], capture_output=True,
                              text=True, timeout=READ_TIMEOUT_S, preexec_fn=_limit_memory,
                              cwd=Path(__file__).resolve().parents[2])
    except subprocess.TimeoutExpired:
        return {"error": f"reading it took more than {READ_TIMEOUT_S} s: pages not counted"}
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"it could not be read: pages not counted ({(done.stderr.strip().splitlines() or ['no message'])[-1][:200]})"}


def _limit_memory() -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (READ_MEMORY_BYTES, READ_MEMORY_BYTES))


def pages_before_references(texts: list[str]) -> tuple[float, int | None]:
    """(pages before the references, 1-based page where they start or None): a page the heading
    comes partway down counts by the share of its text above the heading. The heading is looked
    for from the last page back, so a table of contents naming it does not count."""
    for index in range(len(texts) - 1, -1, -1):
        matches = list(_HEADING.finditer(texts[index]))
        if matches:
            text = texts[index]
            above = len(text[:matches[-1].start()].strip())
            share = above / max(len(text.strip()), 1)
            return round(index + share, 1), index + 1
    return float(len(texts)), None


def _read(path: str) -> dict:
    try:
        import pypdf
    except ImportError:
        return {"error": "pypdf is not installed, so the pages were not counted (pip install pypdf)"}
    try:
        reader = pypdf.PdfReader(path)
        pages = len(reader.pages)
        texts = [(reader.pages[i].extract_text() or "") for i in range(min(pages, MAX_PAGES_READ))]
    except Exception as error:   # noqa: BLE001 - any failure of a hostile file is "unreadable", said so
        return {"error": f"it is not a readable PDF ({type(error).__name__}: {str(error)[:160]}): pages not counted"}
    body, where = pages_before_references(texts)
    body = body if where is not None else float(pages)
    return {"pages": pages, "body_pages": body, "references_page": where, "no_text": not any(t.strip() for t in texts)}


if __name__ == "__main__":
    print(json.dumps(_read(sys.argv[1])))
