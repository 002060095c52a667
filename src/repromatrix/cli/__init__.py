"""The command line: one module per command group, each parsing options and calling
one library function."""

from repromatrix.cli.app import main

__all__ = ["main"]
