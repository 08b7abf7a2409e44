"""The memory cap is observed, not trusted: a program that allocates past it does not get the
memory, on each cgroup layout this host has (v1's memory hierarchy, v2's memory controller)."""
from __future__ import annotations

import os
import sys

import pytest

from grader.jail import cgroups
from grader.jail.runner import run_program
from grader.jail.sandbox import Sandbox

CAP_MB = 64
ALLOCATE = ("import sys\n"
            "block = b'x' * ({mb} << 20)   # written, so every page is charged to the group\n"
            "open(sys.argv[1], 'w').write('allocated')\n")


def layouts() -> list[str]:
    found = cgroups.hierarchies()
    usable = []
    if "memory" in found:
        usable.append("memory")
    if "v2" in found:
        try:
            controllers = (found["v2"].parent / "cgroup.controllers").read_text().split()
        except OSError:
            controllers = []
        if "memory" in controllers:
            usable.append("v2")
    return usable


def program(mb: int):
    return lambda output: [sys.executable, "-c", ALLOCATE.format(mb=mb), str(output)]


@pytest.mark.skipif(os.geteuid() != 0, reason="cgroups need root")
@pytest.mark.parametrize("layout", ["memory", "v2"])
def test_a_program_past_the_cap_does_not_get_the_memory(layout, monkeypatch):
    if layout not in layouts():
        pytest.skip(f"this host has no cgroup {'v1 memory hierarchy' if layout == 'memory' else 'v2 memory controller'}")
    only = {kind: base for kind, base in cgroups.hierarchies().items() if kind in (layout, "pids")}
    monkeypatch.setattr(cgroups, "hierarchies", lambda: only)
    capped = Sandbox(user="never", memory_mb=CAP_MB, jail=False)   # the cap is the point, not the uid
    with run_program(program(CAP_MB // 4), 60, sandbox=capped) as under:
        assert under.exit_code == 0 and under.output_path.read_text() == "allocated"
    with run_program(program(CAP_MB * 4), 60, sandbox=capped) as over:
        assert over.exit_code != 0
        assert not over.output_path.exists() or over.output_path.read_text() != "allocated"
