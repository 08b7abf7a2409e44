# make sssp   : the ./sssp and ./apsp launchers (installs missing Python packages; compiles the CUDA kernels on a GPU machine)
# make test   : the test suite (CPU; GPU tests skip without a GPU)
# make test-gpu: the GPU suite; a missing GPU is a failure
# make bench  : every benchmark table, <= 8 min on the GPU machine (BENCH_SCALE=ci: tiny graphs, any machine)
# make bench-quick: the headline tables (wall time per method; opt vs gapbs, Gunrock, scipy), <= 2 min;
#                  the versus table is rewritten to build/bench/tables/versus.md as each graph finishes
# make bench-classics: the seed papers' methods (vbf, harish, dijkstra, FW, min-plus) beside the papers' tables
# make bench-sweep: issue 25's sweeps warm and cold (default, gpu.toml, full.toml) and ./sssp's wall, <= 8 min
# make mutants: plant each kernel/host mutant of benchmarks/mutant_list.py, and a fixed sample of generated operator mutants
#               of the kernels (benchmarks/cu_mutants.py), in a copy, run its GPU tests, print both scores (<= 9 min; MUTANT_ARGS=--cpu: CPU)
# make mutants-grader: mutmut on the grader's trust-critical modules (benchmarks/mutants_grader.py), score and survivors (CPU; <= 60 min on 2 cores)
# make clean  : remove everything generated (sweep results in results/ are data: kept)
PYTHON ?= python3
PYTEST ?= $(PYTHON) -m pytest
SOURCES := sssp.py apsp.py $(wildcard sssp_gpu/*.py sssp_gpu/methods/*.py sssp_gpu/allpairs/*.py sssp_gpu/kernels/*.cu sssp_gpu/kernels/*.cuh)

.PHONY: all deps test-deps jail-deps test test-gpu bench bench-quick bench-classics bench-sweep mutants mutants-grader clean

all: sssp

# Install only what does not import already: the GPU machine has no network.
# Offline, a failed install is fine as long as numpy imports (sssp needs nothing else).
deps:
	@if ! $(PYTHON) -c "import numpy, scipy, pandas, jinja2, matplotlib, tqdm, pytest, pypdf" 2>/dev/null; then \
	  $(PYTHON) -m pip install -q --retries 1 --timeout 5 -e '.[test]' \
	  || { $(PYTHON) -c "import numpy" \
	       && echo "make: could not install the missing packages (offline?); going on with what imports" >&2; }; \
	fi

sssp: $(SOURCES) Makefile | deps
	@for prog in sssp apsp; do \
	  printf '%s\n' '#!/bin/sh' "# made by \"make sssp\": runs $$prog.py with the Python that built it." \
	    '# Bytecode goes to a cache of our own: an interpreter whose site-packages are read-only and' \
	    '# ship no .pyc (the GPU machine'"'"'s) would otherwise recompile ~250 modules on every run (~0.4 s).' \
	    ': "$${PYTHONPYCACHEPREFIX:=$${XDG_CACHE_HOME:-$${HOME:-/tmp}/.cache}/sssp-gpu/pycache}"' \
	    'export PYTHONPYCACHEPREFIX; unset PYTHONDONTWRITEBYTECODE  # it writes only to that cache' \
	    "exec \"$$(command -v $(PYTHON))\" \"\$$(dirname \"\$$0\")/$$prog.py\" \"\$$@\"" > $$prog.tmp \
	  && chmod +x $$prog.tmp && mv $$prog.tmp $$prog || exit 1; \
	done
	@[ "$(SSSP_WARM)" = 0 ] || $(PYTHON) -m sssp_gpu.warm

# The CPU suite also runs the Dask executor on a local cluster; offline, those tests skip.
test-deps:
	@$(PYTHON) -c "import distributed, mutmut" 2>/dev/null \
	  || $(PYTHON) -m pip install -q --retries 1 --timeout 5 -e '.[test]' \
	  || echo "make: Dask could not be installed (offline?); the Dask executor tests will skip" >&2
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	  || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && export DEBIAN_FRONTEND=noninteractive \
	       && { apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 \
	            || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1; }; }; } \
	  || echo "make: chromium could not be installed; the class page's browser tests will skip (and fail under CI=true)" >&2

# The grader's jail is bubblewrap (bwrap): installed where it is missing and we are root with apt
# (quietly; apt-get update only when the install needs it). Offline machines carry the binary in
# .device-tools/bwrap/ (../shared/hooks/stage-device-data) or name it in GRADER_BWRAP. Without a
# jail, tests/test_jail.py skips, and fails under CI=true.
jail-deps:
	@command -v bwrap >/dev/null 2>&1 || [ -n "$$GRADER_BWRAP" ] || [ -x .device-tools/bwrap/bwrap ] \
	  || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && export DEBIAN_FRONTEND=noninteractive \
	       && { apt-get install -y -q bubblewrap >/dev/null 2>&1 \
	            || { apt-get update -q -o Acquire::Retries=0 >/dev/null 2>&1 && apt-get install -y -q bubblewrap >/dev/null 2>&1; }; }; } \
	  || echo "make: bubblewrap (bwrap) is missing and could not be installed: grade refuses without it; the jail tests skip (and fail under CI=true)" >&2

test: sssp test-deps jail-deps
	$(PYTEST) -q tests

test-gpu: sssp jail-deps
	SSSP_DEVICE=gpu $(PYTEST) -q -m gpu -p no:cacheprovider tests

# the harness compiles the CUDA modules itself, beside the graph preparation (SSSP_WARM=0 here)
bench:
	@$(MAKE) --no-print-directory sssp SSSP_WARM=0
	$(PYTHON) -m benchmarks.run $(BENCH_ARGS)

bench-quick:
	@$(MAKE) --no-print-directory sssp SSSP_WARM=0
	$(PYTHON) -m benchmarks.run --quick $(BENCH_ARGS)

# the seed papers' methods beside the papers' own tables (GPU; about 3 minutes)
bench-classics: sssp
	$(PYTHON) -m benchmarks.classics $(BENCH_ARGS)

# sweeps with the kept ./sssp and one process per run, projected where a limit stops them
bench-sweep: sssp
	$(PYTHON) -m benchmarks.sweep_speed $(BENCH_ARGS)

# the hand-written list and 32 generated operator mutants of the kernels; the budget keeps it in one 10-minute call
MUTANT_ARGS ?= --generated 32 --budget 400
mutants: sssp
	$(PYTHON) -m benchmarks.mutants $(MUTANT_ARGS)

mutants-grader: sssp
	@$(PYTHON) -c "import mutmut" 2>/dev/null || $(PYTHON) -m pip install -q 'mutmut>=3.8,<4'
	$(PYTHON) -m benchmarks.mutants_grader $(GRADER_MUTANT_ARGS)

clean:
	rm -rf sssp sssp.tmp apsp apsp.tmp build report/out .pytest_cache *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
