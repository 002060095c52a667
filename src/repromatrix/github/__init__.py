"""GitHub, low in the stack (it imports no stage): what a comment or an issue body is
made of, and what it must never do; and the one client that talks to it.

    reading.py     the one reading (markdown-it-py): commands, code blocks GitHub shows
    markdown.py    the builders: COMMENT_LIMIT, text and table cells escaped fully,
                   code spans and blocks, <details>, the project's own links
    inert.py       quoted Markdown written again from its syntax tree: nothing in it
                   notifies, links or renders HTML; cut to a limit with a note
    authors.py     who wrote a comment: the workflows' own bot identity
    hidden.py      the one hidden-state codec: a bot's memory in its own text, read
                   only where the bot writes it, decoded within bounds
    repository.py  OWNER/NAME, checked
    client.py      the one GitHub client (the gh command line): issues, comments,
                   reactions, workflow dispatch, artifacts; prints the command where
                   gh is missing
"""
