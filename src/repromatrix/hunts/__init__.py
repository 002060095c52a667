"""The hunts: each finds where an outcome changes, with one probe per candidate
(probe/) and a pure search (search/). One folder per hunt:

bisect/    the release (or, with --git, the commit) where a case or script changed outcome
sweep/     every selected release of one package probed; outcomes as ranges
culprit/   which of the packages that moved between two locks broke it
rerun.py   the command a report tells its reader to run
"""
