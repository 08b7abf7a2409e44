"""What a program's stdout says: the spec's two timing lines (exact or not), times recovered
from other forms real submissions print, and CONTRACTS.md's extra `key: value` lines.

The stdout verdict and the times are separate from the distances: a right answer printed
with `Took 1773.1ms.` is right, its time recovered (and marked so), its stdout not the spec's.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_UNIT = r"(?P<unit>milli-?\s*seconds?|milliseconds?|msecs?|ms|micro-?\s*seconds?|usecs?|us|µs|seconds?|secs?|s)?"
STAGES = ("computation", "filtering")
SPEC_LINE = {stage: f"The total {stage} kernel time on GPU <name> is <x> milli-seconds" for stage in STAGES}


def _tolerant(stage: str) -> re.Pattern:
    return re.compile(rf"total\s+{stage}\s+kernel\s+time(?:\s+on\s+(?P<device>.*?))?\s+is\s*:?\s*"
                      rf"(?P<value>{_NUMBER})\s*{_UNIT}", re.IGNORECASE)


def _strict(stage: str) -> re.Pattern:
    return re.compile(rf"^The total {stage} kernel time on GPU (?P<device>\S.*?) is "
                      rf"(?P<value>\d+(?:\.\d+)?) milli-seconds\s*$", re.MULTILINE)


TOLERANT = {stage: _tolerant(stage) for stage in STAGES}
STRICT = {stage: _strict(stage) for stage in STAGES}
COMPUTATION, FILTERING = TOLERANT["computation"], TOLERANT["filtering"]
_EXTRAS = {
    "rounds": re.compile(r"^\s*rounds\s*:\s*(\d+)", re.IGNORECASE | re.MULTILINE),
    "edges_processed": re.compile(r"^\s*edges\s+processed\s*:\s*(\d+)", re.IGNORECASE | re.MULTILINE),
    "edges_filtered": re.compile(r"^\s*edges\s+scanned\s+by\s+filtering\s*:\s*(\d+)", re.IGNORECASE | re.MULTILINE),
}


@dataclass(frozen=True)
class Pattern:
    """A form of timing line the spec does not use, read when the spec's line is absent."""
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
    number = float(value)
    unit = (unit or default).lower().replace(" ", "").replace("-", "")
    if unit.startswith(("milli", "ms", "msec")):
        return number
    if unit.startswith(("micro", "us", "µs", "usec")):
        return number / 1000.0
    return number * 1000.0   # seconds


def device_name(text: str | None) -> str:
    """'GPU NVIDIA H100 80GB HBM3' -> 'NVIDIA H100 80GB HBM3'; 'GPU' alone -> ''; 'CPU (numpy)' kept."""
    text = (text or "").strip()
    if text.upper() == "GPU":
        return ""
    if text[:4].upper() == "GPU ":
        return text[4:].strip()
    return text


def parse_timing(stdout: str) -> tuple[float | None, float | None, str]:
    """(computation_ms, filtering_ms, device) from the spec's two lines (read tolerantly)."""
    found = {stage: TOLERANT[stage].search(stdout) for stage in STAGES}
    device = next((device_name(m.group("device")) for m in found.values() if m and device_name(m.group("device"))), "")
    values = [to_ms(m.group("value"), m.group("unit")) if m else None for m in found.values()]
    return values[0], values[1], device


def parse_extras(stdout: str) -> dict[str, int | None]:
    """rounds, edges_processed, edges_filtered from CONTRACTS.md's `key: value` lines (None if absent)."""
    found = {}
    for key, pattern in _EXTRAS.items():
        match = pattern.search(stdout)
        found[key] = int(match.group(1)) if match else None
    return found


def stdout_format(stdout: str) -> list[str]:
    """[] when both of the spec's lines are there, exactly; else what is missing or off."""
    problems = []
    for stage in STAGES:
        if STRICT[stage].search(stdout):
            continue
        loose = TOLERANT[stage].search(stdout)
        if loose:
            line = stdout[stdout.rfind("\n", 0, loose.start()) + 1:].split("\n", 1)[0].strip()
            problems.append(f"the {stage} line is not in the spec's words: {line[:120]!r} "
                            f"(expected {SPEC_LINE[stage]!r})")
        else:
            problems.append(f"no {stage} line (expected {SPEC_LINE[stage]!r})")
    return problems


def times(stdout: str, patterns=DEFAULT_PATTERNS) -> dict:
    """computation_ms, filtering_ms, device and where each time came from: 'spec', 'recovered:<name>' or None."""
    computation, filtering, device = parse_timing(stdout)
    values = {"computation": computation, "filtering": filtering}
    source = {stage: ("spec" if values[stage] is not None else None) for stage in STAGES}
    for pattern in patterns:
        if values[pattern.stage] is not None:
            continue
        match = re.search(pattern.regex, stdout)
        if match:
            unit = match.groupdict().get("unit")
            values[pattern.stage] = to_ms(match.group("value"), unit, pattern.unit)
            source[pattern.stage] = f"recovered:{pattern.name}"
    return {"computation_ms": values["computation"], "filtering_ms": values["filtering"], "device": device,
            "times_source": source}


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


_WALL = re.compile(r"^wall: total [\d.]+ s \((?P<stages>[^)]*)\)", re.MULTILINE)


def wall_startup(stdout: str) -> float | None:
    """Seconds a run spent starting (interpreter, imports, device and its context), from the
    `wall:` line this project's ./sssp prints (start-up + device stages); None without one."""
    match = _WALL.search(stdout)
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
    return round(stages["start-up"] + stages.get("device", 0.0), 4)
