"""What a program's stdout says: the spec's two timing lines (exact or not), times recovered
from other forms real submissions print, and CONTRACTS.md's extra `key: value` lines.

The stdout verdict and the times are separate from the distances: a right answer printed
with `Took 1773.1ms.` is right, its time recovered (and marked so), its stdout not the spec's.

Bounded on hostile output: stdout is read line by line, each line cut at LINE_CAP characters
(a timing line is under 200), and every pattern runs on one such line, never across lines, so
the work is linear in stdout's length however the program spaces it (`is` + 65,000 blanks once
took a backtracking pattern minutes). The tolerant patterns see a line with its runs of
blanks made one space (no two blank-eating quantifiers can share a run); none nests a
quantifier (`nested_quantifier` checks, and the grading config refuses staff patterns that do).
Every number is range-checked before use: a time past MAX_TIME_MS or not finite, a count past
MAX_COUNT_DIGITS digits is "unreadable" (None, with a note), never an exception.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

try:
    from re import _parser as _sre_parse          # Python 3.11+
except ImportError:                                # pragma: no cover - 3.10
    import sre_parse as _sre_parse

LINE_CAP = 512                 # characters of a stdout line that are read; the rest is not looked at
MAX_TIME_MS = 1e9              # ~11 days: no run is given that long, so a larger time is unreadable
MAX_COUNT_DIGITS = 18          # rounds/edges below 10**18 fit int64; longer is unreadable
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_UNIT = r"(?P<unit>milli-? ?seconds?|milliseconds?|msecs?|ms|micro-? ?seconds?|usecs?|us|µs|seconds?|secs?|s)?"
STAGES = ("computation", "filtering")
SPEC_LINE = {stage: f"The total {stage} kernel time on GPU <name> is <x> milli-seconds" for stage in STAGES}


def _tolerant(stage: str) -> re.Pattern:
    """On a blank-collapsed line (single spaces): any case, optional device, `is`, `:`, a unit."""
    return re.compile(rf"total {stage} kernel time(?: on (?P<device>.*?))? is ?:? ?"
                      rf"(?P<value>{_NUMBER}) ?{_UNIT}", re.IGNORECASE)


def _strict(stage: str) -> re.Pattern:
    """On a raw line (fullmatch): the spec's words exactly, trailing blanks (or CR) aside."""
    return re.compile(rf"The total {stage} kernel time on GPU (?P<device>\S.*?) is "
                      rf"(?P<value>\d+(?:\.\d+)?) milli-seconds[ \t\r]*")


TOLERANT = {stage: _tolerant(stage) for stage in STAGES}
STRICT = {stage: _strict(stage) for stage in STAGES}
COMPUTATION, FILTERING = TOLERANT["computation"], TOLERANT["filtering"]
_EXTRAS = {   # matched at the start of a blank-collapsed line
    "rounds": re.compile(r"rounds ?: ?(\d+)", re.IGNORECASE),
    "edges_processed": re.compile(r"edges processed ?: ?(\d+)", re.IGNORECASE),
    "edges_filtered": re.compile(r"edges scanned by filtering ?: ?(\d+)", re.IGNORECASE),
}


def lines(stdout: str) -> list[tuple[str, str]]:
    """(raw line cut at LINE_CAP, the same with its blanks collapsed and stripped) per line."""
    cut = [line[:LINE_CAP] for line in stdout.split("\n")]
    return [(raw, " ".join(raw.split())) for raw in cut]


def nested_quantifier(regex: str) -> str:
    """'' or why the pattern can backtrack exponentially: a repeat (max > 1) holding another
    repeat or an alternation (`(a+)+`, `(a|aa)*`). Checked on the parsed pattern."""
    def walk(items, inside: bool) -> str:
        for op, av in items:
            name = str(op)
            if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, high, body = av
                if high > 1 and inside:
                    return "a repeated part holds another repeat"
                found = walk(body, inside or high > 1)
                if found:
                    return found
            elif name == "BRANCH":
                if inside:
                    return "a repeated part holds an alternation"
                for branch in av[1]:
                    found = walk(branch, inside)
                    if found:
                        return found
            elif name == "SUBPATTERN":
                found = walk(av[3], inside)
                if found:
                    return found
            elif name in ("ATOMIC_GROUP",):
                found = walk(av, inside)
                if found:
                    return found
            elif name in ("ASSERT", "ASSERT_NOT"):
                found = walk(av[1], inside)
                if found:
                    return found
            elif name == "GROUPREF_EXISTS":
                for part in av[1:]:
                    if part is not None:
                        found = walk(part, inside)
                        if found:
                            return found
        return ""
    return walk(_sre_parse.parse(regex), False)


@dataclass(frozen=True)
class Pattern:
    """A form of timing line the spec does not use, read when the spec's line is absent; matched
    within one line (cut at LINE_CAP, its runs of blanks made one space), never across lines."""
    name: str
    regex: str                 # with a group (?P<value>...) and optionally (?P<unit>...)
    stage: str                 # computation or filtering
    unit: str = "ms"           # when the line names none


# Forms real submissions of this assignment print (seen in 2017 submissions found public).
DEFAULT_PATTERNS = (
    Pattern("took", r"\bTook\s+(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|us)\b", "computation"),
    Pattern("computation-time", r"\bComputation\s+Time\s*:\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|us)?", "computation"),
    Pattern("filtering-time", r"\bFiltering\s+Time\s*:\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|us)?", "filtering"),
    Pattern("compute-time", r"\bCompute\s+Time\s*:\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|us)?", "computation"),
)


def to_ms(value: str, unit: str | None, default: str = "ms") -> float:
    number = float(value)     # a digit string too long for a float reads as inf, never raises
    unit = (unit or default).lower().replace(" ", "").replace("-", "")
    if unit.startswith(("milli", "ms", "msec")):
        return number
    if unit.startswith(("micro", "us", "µs", "usec")):
        return number / 1000.0
    return number * 1000.0   # seconds


def readable_ms(value: float) -> bool:
    """A time the grader can use: finite and at most MAX_TIME_MS in size (negative ones are kept
    for wall_flag to name)."""
    return math.isfinite(value) and abs(value) <= MAX_TIME_MS


def device_name(text: str | None) -> str:
    """'GPU NVIDIA H100 80GB HBM3' -> 'NVIDIA H100 80GB HBM3'; 'GPU' alone -> ''; 'CPU (numpy)' kept."""
    text = (text or "").strip()
    if text.upper() == "GPU":
        return ""
    if text[:4].upper() == "GPU ":
        return text[4:].strip()
    return text


def _first(pattern: re.Pattern, texts) -> re.Match | None:
    for text in texts:
        match = pattern.search(text)
        if match:
            return match
    return None


def _spec_times(split: list[tuple[str, str]]) -> tuple[dict, str, list[str]]:
    """({stage: ms, None (absent) or nan (unreadable)}, device, notes on unreadable ones)."""
    collapsed = [tidy for _, tidy in split]
    found = {stage: _first(TOLERANT[stage], collapsed) for stage in STAGES}
    device = next((device_name(m.group("device")) for m in found.values() if m and device_name(m.group("device"))), "")
    values, notes = {}, []
    for stage, match in found.items():
        values[stage] = to_ms(match.group("value"), match.group("unit")) if match else None
        if values[stage] is not None and not readable_ms(values[stage]):
            notes.append(f"{stage} time unreadable: {match.group('value')[:40]!r}"
                         f"{'...' if len(match.group('value')) > 40 else ''} is out of range")
            values[stage] = math.nan
    return values, device, notes


def parse_timing(stdout: str) -> tuple[float | None, float | None, str]:
    """(computation_ms, filtering_ms, device) from the spec's two lines (read tolerantly);
    an unreadable time is None."""
    values, device, _ = _spec_times(lines(stdout))
    shown = [None if v is None or math.isnan(v) else v for v in values.values()]
    return shown[0], shown[1], device


def read_extras(stdout: str) -> tuple[dict[str, int | None], list[str]]:
    """rounds, edges_processed, edges_filtered from CONTRACTS.md's `key: value` lines (None if
    absent or unreadable), and a note per unreadable one (more than MAX_COUNT_DIGITS digits)."""
    split = lines(stdout)
    found, notes = {}, []
    for key, pattern in _EXTRAS.items():
        match, raw = next(((m, raw) for raw, tidy in split for m in (pattern.match(tidy),) if m), (None, ""))
        digits = match.group(1) if match else None
        if digits is not None and len(digits) > MAX_COUNT_DIGITS:
            # '+': the number ran on past the cut line (more digits than were looked at)
            cut = len(raw) == LINE_CAP and match.end(1) == len(match.string)
            notes.append(f"{key} unreadable: a number of {len(digits)}{'+' if cut else ''} "
                         f"digits (at most {MAX_COUNT_DIGITS} are read)")
            digits = None
        found[key] = int(digits) if digits is not None else None
    return found, notes


def parse_extras(stdout: str) -> dict[str, int | None]:
    """rounds, edges_processed, edges_filtered (None if absent or unreadable)."""
    return read_extras(stdout)[0]


def stdout_format(stdout: str) -> list[str]:
    """[] when both of the spec's lines are there, exactly; else what is missing or off."""
    problems = []
    split = lines(stdout)
    for stage in STAGES:
        if any(STRICT[stage].fullmatch(raw) for raw, _ in split):
            continue
        loose = next((raw for raw, tidy in split if TOLERANT[stage].search(tidy)), None)
        if loose is not None:
            problems.append(f"the {stage} line is not in the spec's words: {loose.strip()[:120]!r} "
                            f"(expected {SPEC_LINE[stage]!r})")
        else:
            problems.append(f"no {stage} line (expected {SPEC_LINE[stage]!r})")
    return problems


def times(stdout: str, patterns=DEFAULT_PATTERNS) -> dict:
    """computation_ms, filtering_ms, device and where each time came from: 'spec', 'recovered:<name>',
    'unreadable' (a number out of range: the time is None) or None; `unreadable` lists why."""
    split = lines(stdout)
    values, device, notes = _spec_times(split)
    source = {stage: ("spec" if values[stage] is not None else None) for stage in STAGES}
    for stage in STAGES:
        if values[stage] is not None and math.isnan(values[stage]):
            values[stage], source[stage] = None, "unreadable"
    collapsed = [tidy for _, tidy in split]
    for pattern in patterns:
        if values[pattern.stage] is not None or source[pattern.stage] is not None:
            continue
        match = _first(re.compile(pattern.regex), collapsed)
        if match:
            unit = match.groupdict().get("unit")
            value = to_ms(match.group("value"), unit, pattern.unit)
            if readable_ms(value):
                values[pattern.stage], source[pattern.stage] = value, f"recovered:{pattern.name}"
            else:
                source[pattern.stage] = "unreadable"
                notes.append(f"{pattern.stage} time unreadable: {match.group('value')[:40]!r} is out of range")
    return {"computation_ms": values["computation"], "filtering_ms": values["filtering"], "device": device,
            "times_source": source, "unreadable": notes}


KERNEL_FLOOR_MS = 0.002    # a kernel launch and its synchronisation take a few microseconds on any GPU


def wall_flag(computation_ms, filtering_ms, wall_s: float | None, device: str = "") -> str:
    """Why a self-reported kernel time cannot be true, or '': negative, not finite, zero or
    below what one kernel launch takes (GPU runs), or longer than the whole run took (a unit
    mix-up, or made up). Such a time is kept off the leaderboard."""
    stages = {"computation": computation_ms, "filtering": filtering_ms}
    for stage, value in stages.items():
        if value is not None and not math.isfinite(value):
            return f"self-reported {stage} time {value} ms is not a finite number"
        if value is not None and value < 0:
            return f"self-reported {stage} time {value:g} ms is negative"
    if computation_ms is not None and "CPU" not in (device or "") and computation_ms < KERNEL_FLOOR_MS:
        return (f"self-reported computation time {computation_ms:g} ms is below what one kernel launch takes "
                f"({KERNEL_FLOOR_MS * 1000:g} us)")
    reported = sum(v for v in stages.values() if v is not None)
    if wall_s is None or not reported:
        return ""
    if reported > wall_s * 1000.0 + 1.0:
        return f"self-reported kernel time {reported:.3f} ms exceeds the run's wall time {wall_s * 1000:.1f} ms"
    return ""


_WALL = re.compile(r"wall: total [\d.]+ s \((?P<stages>[^)]*)\)")
MAX_STARTUP_S = 1e6


def wall_startup(stdout: str) -> float | None:
    """Seconds a run spent starting (interpreter, imports, device and its context), from the
    `wall:` line this project's ./sssp prints (start-up + device stages); None without one
    (or with a number out of range)."""
    match = next((m for raw, _ in lines(stdout) for m in (_WALL.match(raw),) if m), None)
    if not match:
        return None
    stages = {}
    for part in match.group("stages").split(","):
        name, _, value = part.strip().rpartition(" ")
        try:
            stages[name] = float(value)
        except ValueError:
            return None
    if "start-up" not in stages:
        return None
    total = stages["start-up"] + stages.get("device", 0.0)
    return round(total, 4) if math.isfinite(total) and 0 <= total <= MAX_STARTUP_S else None
