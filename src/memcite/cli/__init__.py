"""The command line: the Typer app, the fast path for per-reply commands, shared options and
messages, and one module of command bodies per stage (``*_commands``, free of Typer so that
the fast path can call them) beside its Typer declarations (``*_app``).

The top wing: it may import every other wing; nothing imports it.
"""
