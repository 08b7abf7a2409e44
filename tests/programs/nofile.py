"""Stand-in sssp: nofile (see _fake.py)."""
from _fake import main

main("nofile")
