"""CI glue for the nightly job: a tier as job matrices (slices.py) and the triage of
tonight's results against the baseline (triage.py). GitHub itself: github/client.py."""
