"""compute-sanitizer's output names the student's kernels, so parsing it is bounded like any
output a submission shapes: lines cut before any pattern sees them, counts of absurd length read
as nothing, and no exception for the grader to stop on."""
from __future__ import annotations

from grader.grading import sanitizer_report as sr

HEADER = "========= Invalid __global__ read of size 4 bytes"


class Recorder:
    """A compiled pattern that remembers the length of every string it is handed."""

    def __init__(self, pattern, seen):
        self.pattern, self.seen = pattern, seen

    def __getattr__(self, name):
        method = getattr(self.pattern, name)

        def call(text, *args, **kwargs):
            self.seen.append(len(text))
            return method(text, *args, **kwargs)
        return call


def test_a_hostile_kernel_name_reaches_the_patterns_cut(monkeypatch):
    seen: list[int] = []
    for name in ("_AT_NEW", "_AT_OLD", "_AT_BARE", "_HAZARDS", "_ERROR_SUMMARY", "_NOT_PRINTED", "_RACE_SUMMARY"):
        monkeypatch.setattr(sr, name, Recorder(getattr(sr, name), seen))
    hostile = "=========     at " + "at a(" * 13000 + "+0x10 in k.cu:12"
    report = sr.parse("\n".join([HEADER, hostile, "========= ERROR SUMMARY: 1 error"]), "memcheck")
    assert seen and max(seen) <= sr.LINE_CAP
    assert report.total == 1
    assert all(len(f.kernel) <= sr.LINE_CAP for f in report.findings)


def test_absurd_counts_are_read_as_nothing_not_an_exception():
    text = "\n".join([HEADER, "=========     at k+0x10 in k.cu:3",
                      "========= ERROR SUMMARY: " + "9" * 900 + " errors",
                      "========= " + "7" * 900 + " errors were not printed"])
    report = sr.parse(text, "memcheck")
    assert report.total == 0 and len(report.findings) == 1


def test_only_the_first_lines_are_read():
    findings = "\n".join(f"{HEADER}\n=========     at k{i}+0x10 in k.cu:{i}" for i in range(sr.LINES_CAP))
    report = sr.parse(findings, "memcheck")
    assert 0 < len(report.findings) <= sr.LINES_CAP // 2
