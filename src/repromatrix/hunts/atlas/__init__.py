"""The compatibility atlas: which versions of the stack work together (docs/atlas.md).

matrix/atlas.py  the matrix.yaml ``atlas:`` block (checked when the matrix loads)
universe.py      each axis's releases (``ABSENT`` first on an optional axis); cells
                 and pairs as plain tuples
releases.py      the releases from the user's indexes, or --wheelhouse alone
state.py         reports/atlas/atlas.json: cells (each case's runs and signature),
                 uv's resolutions, audits, runs, a nightly's plan; bounded, strict
conflicts.py     pairs resolved with uv (--no-build): a conflict is never run
planner.py       the covering array (covertable: seeded, constrained, strength 2 or 3)
knowledge.py     what the cells prove, per case and cause: cleared, condemned, three-way
rules.py         what an answer is (per case, over the cases) and the rules that give it
answers.py       every pair's answer per case (its rule), then over the cases
inference.py     answers inferred between agreeing tested neighbours
localise.py      the follow-up cells that separate a failing cell's suspects
audit.py         the cells that re-test inferred answers, and how they came out
engine.py        plan_round (the one planning step) and advance (rounds of it), with
                 the cells run by an injected CellRunner (pure)
cells.py         planned cells as a tier through pipeline.run (the real CellRunner)
fold.py          a nightly's cells taken back, each from its own artifact only
run.py           the hunt (ATLAS: hunts.hunt.Hunt, its row in hunt_table.py):
                 plan(options) -> run(plan, cells) -> engine, then publish(plan)
                 (report.py from atlas.json), tonight(plan); its runner an
                 engine.CellRunner, not a Prober
commands.py      what atlas plan / fold / report print and write
view.py, query.py, summary.py, report.py, page.py
                 the stored atlas read back: query, recommend, causes, index.html, CSV
"""
