"""GitHub's text, low in the stack (it imports no stage): what a comment or an issue
body is made of, and what it must never do.

    markdown.py    COMMENT_LIMIT, code spans, fenced blocks, <details>, table cells,
                   inert text (nothing from a run notifies, renders HTML or links),
                   cutting to a limit without leaving a block open
    hidden.py      the one hidden-state codec: a bot's memory in its own text, read
                   only where the bot writes it, decoded within bounds
    repository.py  OWNER/NAME, checked
"""
