"""Release bisect: a pure search over candidates (search.py), the candidates from the
user's indexes (candidates.py), one probe = one environment + one case or script
(check.py), the flow that ties them (flow.py) and its report (report.py). It reuses the
environment and execution stages as a matrix run does."""
