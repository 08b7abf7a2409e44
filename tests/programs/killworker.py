"""Stand-in sssp that SIGKILLs the process that started it (the grader's worker), every time."""
import os
import signal

os.kill(os.getppid(), signal.SIGKILL)
raise SystemExit(9)
