"""sweep: every selected release of one package probed; the outcomes as ranges."""
