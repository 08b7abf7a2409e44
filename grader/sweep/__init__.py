"""The sweep engine: a matrix (config) expanded into cells (cells), one graph made ready
(graphs), one cell run and judged (cellrun: check, outfile, timings, in separate dimensions),
the results store (store), programs known by identity (identity), where cells run
(executors: local workers, one per GPU, or Dask), and the progress display (progress).

May import: grader.jail, grader.data, grader.tomlfile, sssp_common, reference.
Nothing of grader.grading or grader.commands.
"""
