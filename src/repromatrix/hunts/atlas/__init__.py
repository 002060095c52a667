"""The compatibility atlas: which versions of the stack work together.

matrix/atlas.py  the matrix.yaml ``atlas:`` block (checked when the matrix loads)
universe.py      each axis's releases from the user's indexes (probe's candidates,
                 the sweep's latest-patch / all); cells and pairs as plain tuples
state.py         reports/atlas/atlas.json: the cells, uv's resolutions, audits, runs
conflicts.py     pairs resolved with uv: a conflict is never run
planner.py       the covering array (covertable: seeded, constrained, strength 2 or 3)
knowledge.py     what the cells prove: cleared and condemned versions and pairs
localise.py      the follow-up cells that separate a failing cell's suspects
inference.py     answers inferred between agreeing neighbours of a one-flip axis
answers.py       every pair's answer from stored cells
engine.py        one run's decisions with an injected cell runner (pure)
cells.py         planned cells as a tier through pipeline.run
flow.py          run and plan as steps; commands.py what they print
view.py, query.py, summary.py, report.py
                 the stored atlas read back: query, recommend, index.html, CSV

run.py           the hunt (ATLAS: hunts.hunt.Hunt, its row in hunt_table.py):
                 plan(options) -> run(plan, cells), its runner running planned cells
                 (engine.RunCells), not a Prober
"""
