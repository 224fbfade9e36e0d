"""Notes in three scopes (global, project, session): the note format, where notes live, safe
writes, the archive, the change log, and moving entries between scopes (``moves``).

Above the read path (it reuses its slug rule, its scope paths and the note parser, which the
read path needs to resolve scopes) and the ledger (its database holds the change log); below
the command line.
"""
