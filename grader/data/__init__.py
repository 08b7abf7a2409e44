"""The graphs: the catalogue (datasets), fetching and verifying downloads (download, integrity),
synthetic stand-ins (synth), and the spec-format input files every run reads, one per edge
ordering, written once and read-only (inputs).

May import: the standard library, numpy/scipy, sssp_common, reference and grader.tomlfile.
Nothing of grader.jail, grader.sweep, grader.grading or grader.commands.
"""
