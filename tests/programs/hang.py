"""Stand-in sssp: hang (see _fake.py)."""
from _fake import main

main("hang")
