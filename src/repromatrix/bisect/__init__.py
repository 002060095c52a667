"""Finding where an outcome changes, with the stages a matrix run uses (environment +
execution): one probe = one cell + one case or script (check.py).

search.py                        the pure search over ProbeOutcome (binary, k-section)
candidates.py                    a package's releases from the user's indexes
commits.py                       a git repository's first-parent commits (--git)
options.py                       bisect's input checked (plan) and written back as its command
flow.py, report.py               bisect: both ends, the search with real probes; bisect.json/.md
probing.py                       the search with real probes: rounds in threads, GPUs, progress
record.py                        what a bisect writes into its record: steps, as-of notes, answer
commit_flow.py                   bisect --git: a repository's commits, or those between two tags
sweep.py, sweep_report.py        every selected release probed; sweep.json/.md, reproducer files
sweep_options.py                 sweep's input checked (plan) and written back as its command
sweep_ranges.py                  which releases a sweep tests; outcomes as ranges, transitions
sweep_reproducer.py              what a bad release's PEP 723 reproducer requires
locks.py, ddmin.py               two locks and the delta debugging over their differences
culprit.py, culprit_report.py    culprit: ddmin with real probes, then a release bisect
"""
