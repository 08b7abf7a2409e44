"""Reading compute-sanitizer's text reports (memcheck, racecheck, synccheck, initcheck) into findings.

Pure: text in, findings out. A report is a run of lines behind the tool's prefix
("========= "); each error starts at an unindented line (its kind) and goes on with indented
lines (where, which thread, the host backtrace). The two shapes NVIDIA's tools have printed
for a device location are both read:

    at 0x70 in /home/u/sssp.cu:41:relax(int*, int)          (cuda-memcheck, early compute-sanitizer)
    at relax(int *, int)+0x70 in sssp.cu:41                 (compute-sanitizer 2023 and later)
    at 0x70 in relax(int*, int)                             (no -lineinfo: no file:line)

Identical errors (tool, kind, kernel, place) are one finding with a count; racecheck's
"[N hazards]" adds N. The tool's own summary ("ERROR SUMMARY: 163096 errors", "RACECHECK
SUMMARY: 23 hazards displayed") is kept as the total, since --print-limit caps what is printed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
PREFIX = re.compile(r"^=+ ?")
_AT_NEW = re.compile(r"\bat (?P<kernel>.+?)\+0x[0-9a-fA-F]+ in (?P<file>[^\s:]+):(?P<line>\d+)")
_AT_OLD = re.compile(r"\bat 0x[0-9a-fA-F]+ in (?P<file>[^\s:]+):(?P<line>\d+):(?P<kernel>.+?)\s*(?:\[|$)")
_AT_BARE = re.compile(r"\bat (?:0x[0-9a-fA-F]+ in )?(?P<kernel>[A-Za-z_~][\w:<>~]*(?:\(.*?\))?)(?:\+0x[0-9a-fA-F]+)?\s*(?:\[|$)")
_HAZARDS = re.compile(r"\[(\d+) hazards?\]")
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+) errors?")
_NOT_PRINTED = re.compile(r"(\d+) errors? (?:were|was) not printed")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY:\s*(\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
REFUSALS = ("Device not supported", "No supported devices", "not supported on this device",
            "Unable to find injection library", "unable to load", "Could not find")
_HEADER_SKIP = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY",
                "Target application returned an error", "Error: process didn't terminate successfully",
                "This tool", "The application", "No errors", "Saved host backtrace")
_ERROR_WORDS = ("Invalid ", "Race reported", "hazard detected", "Barrier error", "Uninitialized ",
                "Program hit ", "Misaligned ", "Out-of-range ", "Malloc/Free error", "Hardware exception",
                "Unused memory", "Leaked ", "Host API uninitialized", "Illegal ", "Device-side assert")


@dataclass
class Finding:
    tool: str
    kind: str                    # the report's own words, places taken out ("Invalid __global__ write of size 4 bytes")
    kernel: str = ""
    location: str = ""           # file:line (basename) when the build had -lineinfo
    other_location: str = ""     # racecheck: the second access
    count: int = 1
    severity: str = "error"      # error | warning (racecheck's own words)
    excerpt: list[str] = field(default_factory=list)   # the first lines of the first such error

    def key(self) -> tuple:
        return (self.tool, self.kind, self.kernel, self.location, self.other_location)

    def as_dict(self) -> dict:
        return {"tool": self.tool, "kind": self.kind, "kernel": self.kernel, "location": self.location,
                "other_location": self.other_location, "count": self.count, "severity": self.severity,
                "excerpt": self.excerpt}

    def line(self) -> str:
        where = self.location + (f" / {self.other_location}" if self.other_location else "")
        return (f"{self.tool}: {self.kind}" + (f" in {self.kernel}" if self.kernel else "")
                + (f" at {where}" if where else "") + (f" ({self.count}x)" if self.count > 1 else ""))


@dataclass
class Report:
    tool: str
    findings: list[Finding]
    total: int | None            # the tool's summary count (errors or hazards), None when it printed none
    refused: str = ""            # the tool could not run here (e.g. "Device not supported")


def _strip(line: str) -> str | None:
    """The line without the tool's prefix, or None for a line of the program's own output."""
    match = PREFIX.match(line)
    if not match or not line.startswith("="):
        return None
    return line[match.end():].rstrip()


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _short_kernel(kernel: str) -> str:
    kernel = kernel.strip()
    return kernel.split("(", 1)[0].strip() or kernel


def _place(text: str) -> tuple[str, str]:
    """(kernel, file:line) from one 'at ...' clause; either may be ''."""
    for pattern in (_AT_NEW, _AT_OLD):
        match = pattern.search(text)
        if match:
            return _short_kernel(match.group("kernel")), f"{_basename(match.group('file'))}:{match.group('line')}"
    match = _AT_BARE.search(text)
    if match and "in " not in match.group("kernel"):
        return _short_kernel(match.group("kernel")), ""
    return "", ""


def _race(header: str, body: list[str]) -> tuple[str, str, str, str, int]:
    """racecheck's analysis line: kind, kernel, first place, second place, hazards."""
    text = " ".join([header, *body[:1]]) if body and body[0].lstrip().startswith("and ") else header
    parts = re.split(r"\s+and\s+(?=\w+ access)", text, maxsplit=1)
    first_access = re.search(r"between (\w+) access", parts[0])
    second_access = re.match(r"(\w+) access", parts[1]) if len(parts) > 1 else None
    kernel, first = _place(parts[0])
    other_kernel, second = _place(parts[1]) if len(parts) > 1 else ("", "")
    hazards = _HAZARDS.search(text)
    kind = (f"Race reported between {first_access.group(1) if first_access else '?'} access and "
            f"{second_access.group(1) if second_access else '?'} access")
    return kind, kernel or other_kernel, first, second, _number(hazards.group(1)) if hazards else 1


def _hazard(header: str, body: list[str]) -> tuple[str, str, str, str, int]:
    """racecheck's hazard mode: 'Potential WAW hazard detected at __shared__ 0x0 in block ...'
    then one line per access ('Write Thread (31, 0, 0) at 0xf0 in k.cu:13:Kernel(void)')."""
    kind = _kind(re.sub(r" at __shared__.*", "", header))
    places = [_place(line) for line in body if "Thread" in line]
    kernel = next((k for k, _ in places if k), "")
    located = [p for _, p in places if p]
    return kind, kernel, located[0] if located else "", located[1] if len(located) > 1 else "", 1


def _kind(header: str) -> str:
    """The error's words with addresses and device-specific numbers taken out."""
    header = re.sub(r"^(?:Error|ERROR|Warning|WARNING):\s*", "", header)
    header = re.sub(r"\s+at 0x[0-9a-fA-F]+.*$", "", header)
    header = re.sub(r"\s+at [\w:~<>]+\(.*$", "", header)
    header = re.sub(r"0x[0-9a-fA-F]+", "0x…", header)
    return header.strip().rstrip(".:")


LINE_CAP = 1024        # characters of a line looked at: kernel names are the student's, and the
LINES_CAP = 20000      # patterns' lazy scans cost the square of a line's length; lines kept


def _number(digits: str) -> int:
    """A count the tool printed; a run of digits no tool prints (the student's text) counts as 0."""
    return int(digits) if len(digits) <= 12 else 0


def parse(text: str, tool: str, excerpt_lines: int = 8) -> Report:
    """Findings of one compute-sanitizer run (its log or its stdout; other lines are ignored).
    Bounded: at most LINES_CAP lines, each cut at LINE_CAP characters, numbers of at most 12 digits."""
    raw_lines = text.splitlines()[:LINES_CAP]
    lines = [s for s in (_strip(raw[:LINE_CAP]) for raw in raw_lines) if s is not None]
    refused = next((line.strip() for line in lines for word in REFUSALS if word in line), "")
    blocks: list[tuple[str, list[str]]] = []
    for line in lines:
        if not line.strip():
            continue
        if line.startswith((" ", "\t")):
            if blocks:
                blocks[-1][1].append(line)
            continue
        blocks.append((line.strip(), []))
    found: dict[tuple, Finding] = {}
    total = None
    not_printed = 0
    for header, body in blocks:
        printed = _NOT_PRINTED.search(header)
        summary = None if printed else _ERROR_SUMMARY.search(header)
        race_summary = _RACE_SUMMARY.search(header)
        if summary:
            total = _number(summary.group(1))
        if race_summary:
            total = _number(race_summary.group(1))
        if printed:
            not_printed += _number(printed.group(1))
        if summary or race_summary or printed or header.startswith(_HEADER_SKIP):
            continue
        if not any(word in header for word in _ERROR_WORDS):
            continue
        severity = "warning" if header.lower().startswith("warning") else "error"
        if "Race reported" in header:
            kind, kernel, location, other, count = _race(header, body)
        elif "hazard detected" in header:
            kind, kernel, location, other, count = _hazard(header, body)
        else:
            kind = _kind(header)
            places = (_place(line) for line in body if line.strip().startswith("at "))
            kernel, location = next((p for p in places if p != ("", "")), ("", ""))
            other, count = "", 1
        finding = Finding(tool, kind, kernel, location, other, count, severity,
                          [header, *[b.strip() for b in body]][:excerpt_lines])
        known = found.get(finding.key())
        if known:
            known.count += count
        else:
            found[finding.key()] = finding
    if total is not None and not_printed:
        total += not_printed
    return Report(tool, list(found.values()), total, refused if not found else "")
