"""Errors the command line turns into one message and exit code 2."""


class UsageError(Exception):
    """A bad argument or input: printed as one message, exit code 2, no traceback."""
