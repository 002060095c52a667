"""One probe: a cell built from a pin set, a case or script run in it, and what it
said (good, bad or skip, and why).

check.py        the probe itself: build (or reuse) the cell, run the case or script
reason.py       what a script said about its outcome, as one line
candidates.py   a package's releases from the user's indexes (what a hunt probes)
"""
