"""sssp_gpu.kernels: a module's mangled kernel names kept beside CuPy's cache, so a fresh process
loads the compiled module instead of compiling it with NVRTC again (0.4-1.2 s a module)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from sssp_gpu import kernels


def test_kept_names_are_read_only_when_every_expression_has_one(tmp_path):
    path = tmp_path / "names.json"
    expressions = ["k<int>", "k<long long>"]
    assert kernels._read_names(path, expressions) is None                      # absent
    path.write_text("{not json")
    assert kernels._read_names(path, expressions) is None                      # damaged
    path.write_text(json.dumps({"k<int>": "_Z1kIiEvv"}))
    assert kernels._read_names(path, expressions) is None                      # one missing
    path.write_text(json.dumps({"k<int>": "_Z1kIiEvv", "k<long long>": 7}))
    assert kernels._read_names(path, expressions) is None                      # not a name
    names = {"k<int>": "_Z1kIiEvv", "k<long long>": "_Z1kIxEvv"}
    path.write_text(json.dumps(names))
    assert kernels._read_names(path, expressions) == names


@pytest.mark.gpu
def test_a_fresh_process_uses_the_kept_names_and_a_wrong_name_is_compiled_again(tmp_path):
    """The first process compiles and keeps the names; the second finds them (no NVRTC compile
    of the module); a kept file with a wrong name falls back to compiling, and still works."""
    code = (
        "import cupy, sys\n"
        "from cupy.cuda import compiler\n"
        "from sssp_gpu import kernels\n"
        "calls = []\n"
        "real = compiler._compile_using_nvrtc_no_warning\n"
        "def spy(source, *a, **k):\n"
        "    calls.append(len(source)); return real(source, *a, **k)\n"
        "compiler._compile_using_nvrtc_no_warning = spy\n"
        "for expression in kernels.MODULES['bmf']:\n"
        "    kernels.kernel('bmf', expression)\n"
        "big = [n for n in calls if n > 1000]\n"
        "print(len(big))\n"
    )
    # a cache of our own and a CuPy disk cache of its own (under HOME): both start empty
    env = {**os.environ, "SSSP_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    env.pop("CUPY_CACHE_DIR", None)

    def compiles() -> int:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return int(done.stdout.strip().splitlines()[-1])

    assert compiles() == 1          # cold: compiled once, names kept
    kept = list((tmp_path / "cache" / "kernels").glob("*.json"))
    assert len(kept) == 1
    assert compiles() == 0          # the kept names and CuPy's cubin: nothing compiled
    names = json.loads(kept[0].read_text())
    names[kernels.MODULES["bmf"][0]] = "_Z14no_such_kernelv"
    kept[0].write_text(json.dumps(names))
    assert compiles() == 1          # a wrong name: compiled again, and the file mended
    assert compiles() == 0
