"""Finding and opening the fleet's PostgreSQL, with its password kept out of every message.

The server is named by a URL (``postgresql://user@host:port/db``) or a libpq key/value string
given on the command line, else ``url`` in ``[fleet]`` of memcite's config file, else libpq's
own ``PG*`` variables (``PGHOST``, ``PGDATABASE``, ``PGSERVICE``...). A password belongs in
``PGPASSWORD`` or ``~/.pgpass``; one written into a URL works too, and is masked wherever the URL
is shown. Nothing connects anywhere unless a command names a server this way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from memcite.errors import MemciteError

URL_PREFIXES = ("postgresql://", "postgres://")
_LIBPQ_VARIABLES = ("PGHOST", "PGHOSTADDR", "PGDATABASE", "PGSERVICE")
CONNECT_TIMEOUT_SECONDS = 10

# user:password@ in a URL, whatever the scheme's spelling (libpq's own forms are found by
# memcite.secrets.conninfo_password_spans, as libpq parses them)
_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)", re.IGNORECASE)


class FleetError(MemciteError):
    """The fleet server cannot be reached or used (exit 2); the message never holds a password."""


def is_server_url(value: str | None) -> bool:
    """Whether ``--db`` names a PostgreSQL server rather than a SQLite file."""
    return bool(value) and value.lower().startswith(URL_PREFIXES)


def mask_password(text: str, secret: str | None = None) -> str:
    """``text`` with any password in a connection string (and ``secret`` itself) masked: the
    passwords found where libpq reads them (a URI's user info and its query, its keys
    percent-decoded; a ``password=`` value quoted or backslash-escaped), each ``***``."""
    from memcite.secrets import conninfo_password_spans

    text = _URL_PASSWORD.sub(r"\1***\3", text)
    limit = len(text)
    for _, start, end in sorted(conninfo_password_spans(text), key=lambda span: -span[1]):
        if end <= limit:  # spans that overlap one already masked are within it
            text = text[:start] + "***" + text[end:]
            limit = start
    if secret:
        text = text.replace(secret, "***")
    return text


def server_from(given: str | None, config: Mapping | None = None,
                environ: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """``(conninfo, where it came from)``: the command line, else ``[fleet] url``, else ``PG*``."""
    if given:
        return given, "the command line"
    url = (config or {}).get("url")
    if url:
        return url, "[fleet] url in memcite's config"
    if any(environ.get(name) for name in _LIBPQ_VARIABLES):
        return "", "the PG* environment variables"
    raise FleetError("no PostgreSQL server named",
                     hint="give --to postgresql://user@host/db, set [fleet] url in memcite's "
                          "config, or set PGHOST/PGDATABASE")


def _parts_of(conninfo: str) -> dict | None:
    """``conninfo`` as libpq parses it (psycopg's ``conninfo_to_dict``); None when it cannot."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        return conninfo_to_dict(conninfo)
    except Exception:  # noqa: BLE001 - a string psycopg cannot parse is reported on connect
        return None


def _password_of(conninfo: str) -> str | None:
    parts = _parts_of(conninfo)
    return parts.get("password") if parts else None


def describe(conninfo: str) -> str:
    """The server as a person should see it: the URL without its password.

    The masked text is read again as libpq reads it (psycopg's ``conninfo_to_dict``): if a
    password is still in it, the address is shown rebuilt from its parsed parts instead, the
    password ``***``; an address psycopg cannot read shows no value that could be one.
    """
    if not conninfo:
        return "(from the PG* variables)"
    parts = _parts_of(conninfo)
    masked = mask_password(conninfo, parts.get("password") if parts else None)
    if parts is None or not parts.get("password"):
        return masked
    again = _parts_of(masked)
    if again is not None and again.get("password") in (None, "", "***"):
        return masked
    from psycopg.conninfo import make_conninfo

    return make_conninfo(**{**parts, "password": "***"})


def connect(conninfo: str, *, autocommit: bool = False):
    """A psycopg connection; every failure a ``FleetError`` with the password masked."""
    try:
        import psycopg
    except ImportError:
        raise FleetError("the fleet commands need psycopg 3, which is not installed",
                         hint="pip install 'codex-memcite[fleet]'") from None
    secret = _password_of(conninfo)
    try:
        return psycopg.connect(conninfo, autocommit=autocommit,
                               connect_timeout=CONNECT_TIMEOUT_SECONDS,
                               application_name="memcite")
    except (psycopg.Error, ValueError) as error:
        detail = mask_password(str(error).strip().splitlines()[0] if str(error).strip()
                               else type(error).__name__, secret)
        raise FleetError(f"cannot connect to {describe(conninfo)}: {detail}") from None


def server_error(error: Exception, conninfo: str) -> FleetError:
    """A database error as a ``FleetError``, its text masked."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return FleetError(f"{describe(conninfo)}: {mask_password(text, _password_of(conninfo))}")
