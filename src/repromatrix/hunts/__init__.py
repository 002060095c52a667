"""The hunts: each finds where an outcome changes, with one probe per candidate from
the runner it is handed (probe/'s prober) and a pure search (search/). One folder per
hunt, one row each in hunt_table.py:

bisect/    the release (or, with --git, the commit) where a case or script changed outcome
sweep/     every selected release of one package probed; outcomes as ranges
culprit/   which of the packages that moved between two locks broke it
check/     one probe in one cell: the smallest hunt, git bisect run's exit code
atlas/     which versions of the stack work together: pairs covered in few cells,
           failures localised (its runner runs planned cells, not one probe)
hunt.py    what a hunt is (``Hunt``: plan, run, what it took from the defaults) and
           the one road every caller takes (``run_hunt``)
searched.py, release_record.py
           what a search over one package's releases takes, plans and records
rerun.py   the command a report tells its reader to run

Every hunt has one shape (hunt.py): its options are checked and its candidates listed
before anything is built (``plan``), the plan runs with the runner it is handed
(``run(plan, runner)``: tests hand their own; parallel probes and GPUs wrap a prober,
probe/rounds.py), and the run writes its record and reports as it goes and ends with
an exit status; the plan carries the command that reruns it.
"""
