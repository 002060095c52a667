"""culprit: which of the packages that moved between two locks broke it."""
