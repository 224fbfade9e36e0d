"""Opening memcite's ledger where a run's ``memcite.paths.Locations`` puts it, and naming its
failures.

The value is resolved once at the boundary (the command line, the MCP server) and passed in;
nothing here reads the environment. Light: the store is imported only when a database is opened.
"""

from __future__ import annotations

import os

from memcite.errors import MemciteError


def open_ledger(locations, *, readonly: bool = False, migrate_schema: bool = True,
                quick_check: bool = False):
    """Open the run's database (``locations.db_path``; see ``memcite.paths.resolve_db_path``).

    A writer creates the default data folder first if it is missing; a database
    named with ``--db`` or ``$MEMCITE_DB`` must be in a folder that exists.
    ``quick_check``: a batch command that writes has the whole file checked first and a
    damaged one refused, nothing written (``memcite.ledger.store.open_store``).
    """
    from memcite.ledger.store import StoreError, open_store

    folder = None if readonly else locations.default_db_folder
    if folder is not None and not os.path.isdir(folder):
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{folder}: cannot create memcite's data folder "
                             f"({exc.strerror or exc})",
                             hint="set MEMCITE_HOME or MEMCITE_DB to a writable place, "
                                  "or pass --db") from None
    return open_store(locations.db_path, readonly=readonly, migrate_schema=migrate_schema,
                      quick_check=quick_check)



def ledger_opener(locations, *, write: bool, missing_is_none: bool = False):
    """An opener of the run's ledger, for a library function to call when its work needs it:
    a writer checked whole first (a batch write: a damaged file refused), or read-only; with
    ``missing_is_none``, None when the default ledger does not exist yet."""
    def opener():
        if write:
            return open_ledger(locations, quick_check=True)
        if missing_is_none and not locations.db.given and not os.path.exists(locations.db_path):
            return None
        from memcite.ledger.store import open_store

        return open_store(locations.db_path, readonly=True)

    return opener

def database_error(db: str | None, exc: Exception,
                   consequence: str = "the reply in progress was not recorded") -> MemciteError:
    """A database failure as a memcite error, ``db`` the database as named (None: the default);
    ``consequence`` says what it cost the command (a read-only command says "not read")."""
    from memcite.ledger.store import StoreError

    name = db or "the memcite database"
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreError(f"{name}: still locked by another process ({text})",
                          hint="retry; nothing was half-written")
    return StoreError(f"{name}: {text}; {consequence}",
                      hint="check the file with `memcite rebuild --check`")
