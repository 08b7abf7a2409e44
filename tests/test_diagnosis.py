"""compute-sanitizer diagnosis on the CPU: the report parser on report text in the shapes
NVIDIA's tools print (tests/fixtures/sanitizer/, written after the documented formats), the
plan of which tool runs which method's smallest failing graph, -lineinfo added to Makefiles,
and the budget/refusal rules."""
from __future__ import annotations

import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from grader.grading import diagnosis
from grader.grading.sanitizer_report import parse

SAMPLES = Path(__file__).resolve().parent / "fixtures" / "sanitizer"


def read(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_memcheck_new_format_counts_and_places():
    report = parse(read("memcheck_new.txt"), "memcheck")
    assert report.total == 100 + 163096          # printed + "were not printed"
    write, api = report.findings
    assert write.kind == "Invalid __global__ write of size 4 bytes"
    assert (write.kernel, write.location, write.count) == ("relax_kernel", "kernels.cu:57", 2)
    assert write.excerpt[1].startswith("at relax_kernel(") and len(write.excerpt) <= 8
    assert api.kind.startswith("Program hit cudaErrorLaunchFailure") and api.kernel == "" and api.location == ""


def test_memcheck_old_format_and_no_lineinfo():
    global_write, shared_read = parse(read("memcheck_old.txt"), "memcheck").findings
    assert (global_write.kind, global_write.kernel, global_write.location) == \
        ("Invalid __global__ write of size 4", "tpe_gather", "tpe.cu:88")
    assert (shared_read.kernel, shared_read.location) == ("segscan_kernel", "")   # built without -lineinfo


def test_racecheck_analysis_reports():
    report = parse(read("racecheck_new.txt"), "racecheck")
    assert report.total == 3
    first, second, warning = report.findings
    assert first.kind == "Race reported between Write access and Read access"
    assert (first.kernel, first.location, first.other_location, first.count) == \
        ("edge_process_usesmem", "segscan.cu:41", "segscan.cu:44", 16)
    assert (second.other_location, second.count) == ("segscan.cu:41", 7)
    assert (warning.severity, warning.count, warning.kernel) == ("warning", 207, "impl1_outcore_shmem_kernel")


def test_racecheck_old_and_hazard_formats():
    race, hazard = parse(read("racecheck_old.txt"), "racecheck").findings
    assert (race.kernel, race.location, race.other_location, race.count) == \
        ("sumKernel", "block_error.cu:41", "block_error.cu:51", 4)
    assert hazard.kind == "Potential WAW hazard detected" and hazard.location == "raceGroupBasic.cu:13"


def test_synccheck_and_initcheck():
    barrier, = parse(read("synccheck.txt"), "synccheck").findings
    assert (barrier.kind, barrier.location, barrier.count) == \
        ("Barrier error detected. Divergent thread(s) in warp", "divergent_threads.cu:26", 2)
    uninit, = parse(read("initcheck.txt"), "initcheck").findings
    assert (uninit.kind, uninit.kernel, uninit.location) == \
        ("Uninitialized __global__ memory read of size 4 bytes", "vectorAdd", "test.cu:12")


def test_clean_run_and_refusal():
    clean = parse(read("clean.txt"), "memcheck")
    assert clean.findings == [] and clean.total == 0 and clean.refused == ""
    refused = parse(read("refused.txt"), "memcheck")
    assert refused.findings == [] and "Device not supported" in refused.refused


def test_program_output_that_is_not_the_tool_is_ignored():
    text = "Invalid __global__ write of size 4 bytes\n    at k()+0x10 in a.cu:1\n========= ERROR SUMMARY: 0 errors\n"
    assert parse(text, "memcheck").findings == []


def row(run_id, method, graph, status, vertices, edges=10, rep=0):
    return {"run_id": run_id, "method": method, "graph": graph, "status": status,
            "graph_vertices": vertices, "graph_edges": edges, "rep": rep}


def test_plan_smallest_failing_graph_and_shared_memory():
    rows = [row("1", "tpe", "big", "wrong", 1000), row("2", "tpe", "small", "crash", 6),
            row("3", "tpe", "mid", "ok", 40), row("4", "segscan", "small", "ok", 6),
            row("5", "segscan", "big", "ok", 1000), row("6", "bmf", "small", "ok", 6)]
    without = diagnosis.plan("s", rows, shared=False)
    assert [(t.method, t.tool, t.graph) for t in without] == \
        [("tpe", "memcheck", "small"), ("tpe", "synccheck", "small"), ("tpe", "initcheck", "small")]
    with_shared = diagnosis.plan("s", rows, shared=True)
    assert [(t.method, t.tool) for t in with_shared][:2] == [("tpe", "memcheck"), ("tpe", "racecheck")]
    passing = [t for t in with_shared if t.verdict == "ok"]
    assert [t.method for t in passing] == ["segscan", "bmf"]        # the shared-memory method's race first
    assert {(t.method, t.tool, t.graph) for t in passing} == {("segscan", "racecheck", "small"),
                                                             ("bmf", "racecheck", "small")}


def test_add_lineinfo_after_every_nvcc(tmp_path):
    (tmp_path / "Makefile").write_text("# nvcc in a comment\nNVCC = /usr/local/cuda/bin/nvcc\n"
                                       "sssp: a.cu\n\tnvcc -O3 -o sssp a.cu\n\t$(NVCC) -c b.cu\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "rules.mk").write_text("CC = gcc\n")
    changes = diagnosis.add_lineinfo(tmp_path)
    text = (tmp_path / "Makefile").read_text()
    assert changes == ["Makefile:2", "Makefile:4"]
    assert "NVCC = /usr/local/cuda/bin/nvcc -lineinfo\n" in text and "\tnvcc -lineinfo -O3" in text
    assert text.startswith("# nvcc in a comment\n") and "$(NVCC) -c b.cu" in text
    assert diagnosis.add_lineinfo(tmp_path) == []          # not twice


def test_budget_and_refusal_skip_the_rest():
    targets = diagnosis.plan("s", [row("1", "tpe", "g", "wrong", 5)], shared=True)   # 4 tools

    def refusing(target, left_s):
        future = Future()
        future.set_result({"status": "refused", "detail": "Device not supported", "seconds": 0.1,
                           "findings": [], "total": None})
        return future

    out = list(diagnosis.run_budgeted(refusing, targets, budget_s=60, jobs=1))
    assert out[0][1]["status"] == "refused"
    assert all(result is None and "refused" in why for _, result, why in out[1:]) and len(out) == 4
    nothing = list(diagnosis.run_budgeted(refusing, targets, budget_s=0.1, jobs=2))
    assert all(result is None and "budget" in why for _, result, why in nothing)
    given = []

    def slow(target, left_s):   # each run takes 0.3 s and is handed what is left of the budget
        given.append(left_s)
        time.sleep(0.3)
        return _done({"status": "ran", "detail": "", "seconds": 0.3,
                                                             "findings": [], "total": 0})

    out = list(diagnosis.run_budgeted(slow, targets, budget_s=1.5, jobs=1, least_s=0.7))
    ran = [t for t, result, _ in out if result is not None]
    assert 1 <= len(ran) <= 3 and len(out) == 4 and all(0.7 <= left <= 1.5 for left in given)
    assert all("budget" in why for _, result, why in out if result is None)
    assert given == sorted(given, reverse=True)


def _done(result: dict) -> Future:
    future = Future()
    future.set_result(result)
    return future


def test_shared_memory_is_found_in_cuda_sources(tmp_path):
    (tmp_path / "a.cu").write_text("__global__ void k() { }\n")
    assert not diagnosis.uses_shared_memory(tmp_path)
    (tmp_path / "b.cuh").write_text("__device__ void f() { __shared__ int s[32]; }\n")
    assert diagnosis.uses_shared_memory(tmp_path)


def test_a_session_level_skip_stays_off_the_students_results(tmp_path):
    class Grading:   # only what diagnose_student reads before it would run anything
        build = sandbox = matrix = None
    rows = [row("1", "tpe", "g", "wrong", 5)]
    found = diagnosis.diagnose_student("s", tmp_path, tmp_path, tmp_path / "area", "p1", rows, [], {}, Grading(),
                                       None, budget_s=10, session=diagnosis.setup(None, [], enabled=False))
    assert found["targets"] == 3 and all("--no-diagnosis" in s["why"] for s in found["skipped"])
    assert diagnosis.results_test(tmp_path, "p1") == []
    assert (tmp_path / "diagnosis.json").exists()       # the class page still says why nothing ran
