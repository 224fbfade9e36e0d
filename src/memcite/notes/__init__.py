"""Project notes: the note format, where notes live, safe writes, the archive, and the change log.

Above the read path (it reuses its slug rule) and the ledger (its database holds
the change log); below the command line.
"""
