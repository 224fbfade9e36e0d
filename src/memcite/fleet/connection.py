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

# user:password@ in a URL; password=... in a key/value string (quoted or not)
_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)")
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"([?&]password=)([^&\s]*)", re.IGNORECASE)


class FleetError(MemciteError):
    """The fleet server cannot be reached or used (exit 2); the message never holds a password."""


def is_server_url(value: str | None) -> bool:
    """Whether ``--db`` names a PostgreSQL server rather than a SQLite file."""
    return bool(value) and value.lower().startswith(URL_PREFIXES)


def mask_password(text: str, secret: str | None = None) -> str:
    """``text`` with any password in a connection string (and ``secret`` itself) masked."""
    text = _URL_PASSWORD.sub(r"\1***\3", text)
    text = _KEYWORD_PASSWORD.sub(r"\1***", text)
    text = _QUERY_PASSWORD.sub(r"\1***", text)
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


def _password_of(conninfo: str) -> str | None:
    try:
        from psycopg.conninfo import conninfo_to_dict

        return conninfo_to_dict(conninfo).get("password")
    except Exception:  # noqa: BLE001 - a string psycopg cannot parse is reported on connect
        return None


def describe(conninfo: str) -> str:
    """The server as a person should see it: the URL without its password."""
    return mask_password(conninfo) if conninfo else "(from the PG* variables)"


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
