"""Finding where an outcome changes, with the stages a matrix run uses (environment +
execution): one probe = one cell + one case or script (check.py).

search.py                        the pure search over ProbeOutcome (binary, k-section)
candidates.py                    a package's releases from the user's indexes
commits.py                       a git repository's first-parent commits (--git)
flow.py, report.py               bisect: both ends, the search with real probes; bisect.json/.md
sweep.py, sweep_report.py        every selected release probed; ranges, reproducers
locks.py, ddmin.py               two locks and the delta debugging over their differences
culprit.py, culprit_report.py    culprit: ddmin with real probes, then a release bisect
"""
