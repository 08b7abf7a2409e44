"""Stand-in sssp: notiming (see _fake.py)."""
from _fake import main

main("notiming")
