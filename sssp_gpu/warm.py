"""``python -m sssp_gpu.warm``: compile every CUDA module once (``make sssp`` runs it)."""
import sys

from .device import gpu_available


def main() -> int:
    if not gpu_available():
        print("sssp: no CUDA GPU here: the numpy fallback will run; nothing to compile")
        return 0
    from . import kernels

    names = kernels.warm_all()
    print(f"sssp: compiled CUDA modules: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
