"""bisect: the release (or commit) where a case or script changed outcome."""
