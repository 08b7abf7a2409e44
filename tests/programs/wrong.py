"""Stand-in sssp: wrong (see _fake.py)."""
from _fake import main

main("wrong")
