"""``repromatrix bounds``: are a package's declared dependency ranges right? Each
direct dependency's floor and ceiling tested in cells, beside a set of the others
that works (docs/bounds.md)."""
