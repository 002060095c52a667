"""The searches, pure: each is handed its candidates and an oracle, and knows nothing
of environments (tested with synthetic oracles).

bisection.py   where along an ordered list an outcome flips (binary search, k-section)
ddmin.py       which of a set of changes turn good into bad (delta debugging)
ranges.py      which releases a sweep tests, and its outcomes as ranges and transitions
"""
