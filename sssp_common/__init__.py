"""The bottom layer every part of the project shares, and nothing else.

- :mod:`.vocabulary`: the spec's words (methods, syncs, block configurations, orderings,
  statuses, segscan = bmf + usesmem) and the unreachable marker;
- :mod:`.graph`, :mod:`.loader`, :mod:`.edgelist`, :mod:`.textio`: the graph in memory,
  reading it from SNAP/DIMACS files and writing edge lists and distance files;
- :mod:`.files`, :mod:`.digest`: whole-or-absent writes, cache folders, content digests;
- :mod:`.record`: the run record (one JSONL schema, one reader, one writer, one rule for a
  cell's latest row) and its provenance fields.

It imports nothing from the engine (``sssp_gpu``), ``reference``, ``report`` or ``grader``.
"""
