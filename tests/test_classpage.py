"""The class page (grader.grading.classpage): its data from a graded folder, and the page itself
in a real headless Chromium: it renders (a screenshot that is not blank), every link resolves
to a file in the folder, and the gradebook sorts. Chromium comes from Debian's `chromium`
(`make test` installs it when it can); under CI=true a missing browser fails the test."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from grader.grading import classpage, similarity

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "similarity"


def browser() -> str | None:
    found = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    if found is None and os.environ.get("CI", "").lower() == "true":
        pytest.fail("CI=true and no chromium: the class page cannot be checked (apt-get install chromium)")
    return found


needs_browser = pytest.mark.skipif(browser() is None and os.environ.get("CI", "").lower() != "true",
                                   reason="no chromium (Debian package `chromium`; make test installs it)")


def a_test(name, score, max_score, output=""):
    return {"name": name, "score": score, "max_score": max_score, "output": output, "visibility": "visible"}


def graded_folder(out: Path) -> Path:
    """A small graded class: five students, their pages, runs, a diagnosis and the similarity."""
    scores = {"alice": (10, 30, 10), "bob": (10, 60, 10), "carol": (0, 0, 0), "dave": (10, 45, 5), "eve": (10, 30, 10)}
    rows = []
    for student, (build, correct, fmt) in scores.items():
        folder = out / student
        folder.mkdir(parents=True)
        tests = [a_test("Build: make sssp produces ./sssp", build, 10), a_test("bmf correct on figure1", correct, 60),
                 a_test("Output file format", fmt, 10)]
        data = {"score": build + correct + fmt, "max_score": 80, "tests": tests, "program_id": f"submission@{student}"}
        (folder / "results.json").write_text(json.dumps(data))
        (folder / "index.html").write_text(f"<html><body>{student}</body></html>")
        for index in range(3):
            status = "ok" if correct >= 45 or index == 0 else "wrong"
            rows.append({"run_id": f"{student}{index}", "program_id": f"submission@{student}", "student": student,
                         "program": student, "status": status, "rep": 0,
                         "detail": f"{index + 3} of 6 distances differ (first at vertex {index})" if status != "ok" else ""})
    (out / "carol" / "diagnosis.json").write_text(json.dumps({
        "program_id": "submission@carol", "targets": 2, "seconds": 3.1, "complete": True,
        "tool_runs": [{"method": "tpe", "tool": "memcheck"}], "skipped": [{"why": "time budget spent", "tool": "initcheck",
                                                                        "method": "tpe", "graph": "figure1"}],
        "findings": [{"tool": "memcheck", "kind": "Invalid __global__ write of size 4 bytes", "kernel": "gather",
                      "location": "tpe.cu:88", "other_location": "", "count": 163096, "severity": "error",
                      "excerpt": ["Invalid __global__ write of size 4 bytes", "at gather(int *)+0x70 in tpe.cu:88"],
                      "method": "tpe", "graph": "figure1", "cell": "figure1 source 256x8 tpe outcore",
                      "run_verdict": "wrong"}]}))
    (out / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "gradebook.csv").write_text("student,score\n")
    pairs = similarity.compare({s: FIXTURES / s for s in scores}, sample_code=FIXTURES / "sample")
    (out / "similarity.json").write_text(json.dumps({"pairs": [p.as_dict() for p in pairs], "k": 12, "window": 8,
                                                     "sample_code": "sample"}))
    return out


def test_collect_histogram_pass_rates_failures(tmp_path):
    out = graded_folder(tmp_path / "graded")
    data = classpage.collect(out)
    assert data["students"] == ["alice", "bob", "carol", "dave", "eve"]
    assert sum(b["count"] for b in data["histogram"]) == 5
    assert data["histogram"][-1]["count"] == 1                     # bob's 80 / 80 lands in the last bin
    rates = {r["name"]: (r["passed"], r["of"]) for r in data["pass_rates"]}
    assert rates["bmf correct on figure1"] == (1, 5) and rates["Build: make sssp produces ./sssp"] == (4, 5)
    top = data["failures"][0]
    assert top["message"] == "wrong: N of N distances differ (first at vertex N)"
    assert top["students"] == ["alice", "carol", "eve"] and top["runs"] == 6
    assert data["findings"][0]["student"] == "carol" and data["diagnosed"][0]["skipped"] == ["1 x time budget spent"]
    assert data["similarity"]["pairs"][0]["a"] == "alice" and data["similarity"]["pairs"][0]["b"] == "eve"


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.rows = [], []
        self._in_book, self._cell = False, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("href", "src"):
            if attrs.get(name):
                self.links.append(attrs[name])
        if tag == "table" and attrs.get("id") == "book":
            self._in_book = True
        if self._in_book and tag == "tr":
            self.rows.append([])
        if self._in_book and tag == "td":
            self.rows[-1].append(attrs.get("data-v"))

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_book = False


def chromium(*args, timeout=90) -> subprocess.CompletedProcess:
    return subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--no-first-run", "--hide-scrollbars", *args], capture_output=True, text=True, timeout=timeout)


@needs_browser
def test_page_renders_in_chromium_and_every_link_resolves(tmp_path):
    out = graded_folder(tmp_path / "graded")
    page = classpage.write(out)
    text = page.read_text()
    assert "<link" not in text and "http://" not in text and "https://" not in text   # nothing fetched
    shot = tmp_path / "page.png"
    done = chromium(f"--screenshot={shot}", "--window-size=1280,1600", page.as_uri())
    assert shot.is_file(), done.stderr[-2000:]
    from PIL import Image
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 1600)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 20              # text, bars, table shading: not a blank page
    blue = sum(n for n, rgb in colours if rgb == (0x4a, 0x7e, 0xbb))
    assert blue > 500                                             # the histogram's bars were drawn
    dom = chromium("--dump-dom", page.as_uri()).stdout
    parser = Links()
    parser.feed(dom)
    assert parser.links, "no links on the page"
    for link in parser.links:
        parts = urlsplit(link)
        if not parts.path:                                        # in-page anchors: their targets exist
            assert f'id="{parts.fragment}"' in dom, link
            continue
        assert not parts.scheme and not parts.netloc, f"link leaves the folder: {link}"
        assert (out / unquote(parts.path)).is_file(), f"broken link: {link}"
    assert {"alice/index.html", "eve/index.html", "gradebook.csv"} <= set(parser.links)


@needs_browser
def test_gradebook_sorts_in_the_browser(tmp_path):
    out = graded_folder(tmp_path / "graded")
    page = classpage.write(out)
    order = []
    for fragment in ("#sort=1-desc", "#sort=1"):
        dom = chromium("--dump-dom", page.as_uri() + fragment).stdout
        parser = Links()
        parser.feed(dom)
        order.append([float(r[1]) for r in parser.rows if len(r) > 1])
    assert order[0] == sorted(order[0], reverse=True) and order[0][0] == 80
    assert order[1] == sorted(order[1]) and order[1][0] == 0


def test_fractional_scores_are_shown_to_two_decimals(tmp_path):
    """A score such as 54.8888 (rubric shares) reads 54.89 in the gradebook, as it was seen on
    the H100's class page; the sort key keeps the exact value."""
    out = graded_folder(tmp_path / "out")
    data = json.loads((out / "dave" / "results.json").read_text())
    data["score"] = 54.888844
    data["tests"][1]["score"] = 39.888844
    (out / "dave" / "results.json").write_text(json.dumps(data))
    page = classpage.write(out).read_text()
    assert "54.89 / 80" in page and "54.8888 " not in page and 'data-v="54.888844"' in page
    assert ">39.89<" in page
