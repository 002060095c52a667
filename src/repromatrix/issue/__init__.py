"""Ask it on the issue: ``/repromatrix sweep|bisect|check|approve`` in an issue comment,
and a nightly watch of labelled issues' repros, the approved ones only
(.github/workflows/issue-repro.yml; the design and its security: docs/issue-repro.md).

command.py (the comment's command line), repro.py (the issue's repro block and its
sha256), config.py (.github/repromatrix.yml, trust), event.py (an issue_comment or a
labeled event to a plan), plan.py (the parse job's artifact, checked with the library's planners),
run.py (the one job that runs repros), answer.py (what it hands on), state.py (the bot
comment and its hidden state), watch.py (rotation, flips), bot.py (GitHub through gh).
"""
