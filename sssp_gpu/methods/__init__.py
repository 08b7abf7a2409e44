"""The SSSP methods. Each module exposes ``run_cpu(graph, run)`` and ``run_gpu(graph, run)``."""
