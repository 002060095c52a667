"""GitHub, low in the stack (it imports no stage): what a comment or an issue body is
made of, and what it must never do; and the one client that talks to it.

    markdown.py    COMMENT_LIMIT, code spans, fenced blocks, <details>, table cells,
                   inert text (nothing from a run notifies, renders HTML or links),
                   cutting to a limit without leaving a block open
    hidden.py      the one hidden-state codec: a bot's memory in its own text, read
                   only where the bot writes it, decoded within bounds
    repository.py  OWNER/NAME, checked
    client.py      the one GitHub client (the gh command line): issues, comments,
                   reactions, workflow dispatch, artifacts; prints the command where
                   gh is missing
"""
