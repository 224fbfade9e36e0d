"""PostgreSQL addresses lose their password as libpq parses them: a URI's user info and query
(its keys percent-decoded: ``?pass%77ord=``), a ``password=`` value quoted or with backslash
escapes (``password=a\\ b``), in every message (memcite.secrets) and in the server's name
(``memcite.fleet.connection.describe``, what the text and --json outputs show)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

psycopg_conninfo = pytest.importorskip("psycopg.conninfo")  # the fleet extra, in [test] too

from memcite.cli.console import masked  # noqa: E402
from memcite.fleet.connection import FleetError, connect, describe, mask_password  # noqa: E402
from memcite.secrets import mask_secrets  # noqa: E402

SECRET = "S3cret-Value_9"

ADDRESSES = [
    f"postgresql://app@db.internal/fleet?pass%77ord={SECRET}",
    f"postgresql://app@db.internal/fleet?sslmode=require&pass%77ord={SECRET}",
    f"postgres://app@db.internal/fleet?%70%61%73%73%77%6f%72%64={quote(SECRET)}",
    f"postgresql://app@db.internal/fleet?password={quote(SECRET, safe='')}",
    f"postgresql://app:{SECRET}@db.internal:5432/fleet",
    "postgresql://app@db.internal/fleet?password=S3cret%2DValue_9",
    f"host=db.internal password=a\\ {SECRET} dbname=fleet",
    f"host=db.internal password={SECRET}\\ b dbname=fleet",
    f"host=db.internal password='a {SECRET}' dbname=fleet",
    f"host=db.internal password='it\\'s {SECRET}' user=app",
    f"host=db.internal password = {SECRET} user=app",
    f"dbname=fleet password={SECRET}",
    f"host=db.internal user=app password={SECRET};tail",
]


def parsed_password(text: str) -> str | None:
    try:
        return psycopg_conninfo.conninfo_to_dict(text).get("password")
    except Exception:  # noqa: BLE001
        return "(unparseable)"


@pytest.mark.parametrize("address", ADDRESSES)
def test_the_server_s_name_holds_no_password(address):
    assert SECRET in parsed_password(address).replace("%2D", "-")  # libpq reads one
    shown = describe(address)
    assert SECRET not in shown and quote(SECRET) not in shown
    assert parsed_password(shown) in (None, "***")
    assert "db.internal" in shown or "fleet" in shown  # still names the server


@pytest.mark.parametrize("address", ADDRESSES)
def test_every_message_masks_it(address):
    for text in (mask_password(f"cannot connect to {address}: refused"),
                 masked(f"memcite: --db {address}: no such server"),
                 mask_secrets(f"pushed to {address}")):
        assert SECRET not in text, text
        assert "S3cret" not in text, text


def test_plain_text_is_left_alone():
    for text in ("if password == other:", "password=<your password>", "see ?q=50%25 off",
                 "host=db.internal dbname=fleet"):
        assert mask_secrets(text) == text


@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               min_size=1, max_size=30))
def test_any_password_written_as_libpq_reads_it_is_not_shown(password):
    keyword = psycopg_conninfo.make_conninfo(host="db.internal", dbname="fleet",
                                             password=password)
    uri = f"postgresql://app@db.internal/fleet?pass%77ord={quote(password, safe='')}"
    for address in (keyword, uri):
        assert parsed_password(address) == password
        assert parsed_password(describe(address)) in (None, "***"), (address, describe(address))


def test_a_failed_connection_names_the_server_without_its_password():
    with pytest.raises(FleetError) as failed:
        connect(f"postgresql://app@127.0.0.1:1/fleet?pass%77ord={SECRET}&connect_timeout=2")
    assert SECRET not in str(failed.value) and "127.0.0.1" in str(failed.value)
    with pytest.raises(FleetError) as failed:
        connect(f"host=127.0.0.1 port=1 password=a\\ {SECRET} connect_timeout=2")
    assert SECRET not in str(failed.value)
