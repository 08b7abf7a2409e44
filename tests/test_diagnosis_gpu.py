"""compute-sanitizer on a real GPU (make test-gpu): a small CUDA program written for this test
(tests/fixtures/sanitizer_cuda/planted.cu), built with nvcc -lineinfo, with a planted
out-of-bounds write and a planted shared-memory race, gets both findings with their file:line
when run through the grader's diagnosis (the jail runner, the report parser); the same program
built correct gets none. Skips, saying why, where the tool or the GPU cannot run it (no nvcc or
compute-sanitizer; "Device not supported" on H200/gVisor machines)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from grader.grading import diagnosis
from grader.grading.sanitizer_report import parse
from grader.jail.sandbox import Sandbox
from grader.sweep.cells import Cell

SOURCE = Path(__file__).resolve().parent / "fixtures" / "sanitizer_cuda" / "planted.cu"


def marked_line(mark: str) -> str:
    for number, line in enumerate(SOURCE.read_text().splitlines(), 1):
        if f"MARK: {mark}" in line:
            return f"planted.cu:{number}"
    raise AssertionError(f"no marker {mark!r} in {SOURCE}")


def tools() -> tuple[str, str]:
    nvcc = shutil.which("nvcc") or next((p for p in ("/usr/local/cuda/bin/nvcc",) if Path(p).exists()), None)
    sanitizer = diagnosis.find_sanitizer()
    if not nvcc or not sanitizer:
        pytest.skip(f"needs nvcc and compute-sanitizer (found: nvcc={nvcc}, compute-sanitizer={sanitizer})")
    return nvcc, sanitizer


def compiled(nvcc: str, folder: Path, planted: int) -> Path:
    folder.mkdir(mode=0o755)
    shutil.copy(SOURCE, folder / "planted.cu")
    program = folder / "planted"
    for arch in (["-arch=native"], []):   # nvcc before 11.6 has no -arch=native
        done = subprocess.run([nvcc, "-lineinfo", *arch, f"-DPLANTED={planted}", "-o", str(program), "planted.cu"],
                              cwd=folder, capture_output=True, text=True, timeout=300)
        if done.returncode == 0:
            return program
    pytest.fail(f"nvcc failed: {done.stderr[-2000:]}")


def sanitize(sanitizer: str, tool: str, program: Path):
    cell = Cell("t", "g", "given", 256, 4, "bmf", "bmf", "no", "outcore", 0)
    sandbox = diagnosis.sandbox_for_sanitizer(Sandbox(user="auto"), sanitizer)
    text, wall, status, detail = diagnosis.sanitize(sanitizer, tool, "{sssp}", cell, program, str(program),
                                                    program.parent, 120, sandbox)
    report = parse(text, tool)
    if report.refused:
        pytest.skip(f"compute-sanitizer refused on this GPU: {report.refused}")
    assert status == "ran", f"{status}: {detail}\n{text[-2000:]}"
    return report


@pytest.mark.gpu
def test_planted_bugs_are_found_with_file_and_line(tmp_path):
    nvcc, sanitizer = tools()
    program = compiled(nvcc, tmp_path / "planted", 1)
    memcheck = sanitize(sanitizer, "memcheck", program)
    writes = [f for f in memcheck.findings if f.kind.startswith("Invalid __global__ write of size 4")]
    assert writes, [f.line() for f in memcheck.findings]
    assert writes[0].kernel == "fill" and writes[0].location == marked_line("out-of-bounds write")
    racecheck = sanitize(sanitizer, "racecheck", program)
    races = [f for f in racecheck.findings if f.kernel == "rotate"]
    assert races, [f.line() for f in racecheck.findings]
    places = {races[0].location, races[0].other_location}
    assert places == {marked_line("race write"), marked_line("race read")}, races[0].line()
    print("\n".join(f.line() for f in memcheck.findings + racecheck.findings))   # for the report (pytest -s)


@pytest.mark.gpu
def test_a_correct_program_gets_no_finding(tmp_path):
    nvcc, sanitizer = tools()
    program = compiled(nvcc, tmp_path / "correct", 0)
    for tool in ("memcheck", "racecheck", "synccheck", "initcheck"):
        report = sanitize(sanitizer, tool, program)
        assert report.findings == [], (tool, [f.line() for f in report.findings])
