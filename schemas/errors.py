"""The user-facing error of every layer: the bottom of the import graph, so any layer may raise it."""


class UsageError(Exception):
    """A bad argument or input from the user, said in one line: the command line prints it and exits
    with code 2, the HTTP server answers it as a 4xx."""
