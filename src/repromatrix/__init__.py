"""repromatrix: a reproduction and regression test matrix for fine-tuning stacks.

The pipeline, one module per step:

    matrix (matrix.yaml -> combinations)
      -> environment (one uv environment per resolved pin set)
      -> runner (pytest over cases/ inside it, one interpreter, crash/timeout supervision)
      -> results (results.json, one file per combination)
      -> verdicts (pass / known-broken / regressed ...)
      -> reports (JSON, JUnit, Markdown, HTML)

bisect reuses environment and runner for one package's release range.
"""

__version__ = "0.1.0"
