"""Errors shared by engines/read's engine modules."""


class Refused(Exception):
    """The engine refused the table; the message is the engine's own."""


class SetupError(Exception):
    """The engine could not be started or reached: says nothing about the table."""
