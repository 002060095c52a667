"""check: one probe in one cell, its verdict as git bisect run's exit code."""
