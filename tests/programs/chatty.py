"""Stand-in sssp: chatty (see _fake.py)."""
from _fake import main

main("chatty")
