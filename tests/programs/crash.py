"""Stand-in sssp: crash (see _fake.py)."""
from _fake import main

main("crash")
