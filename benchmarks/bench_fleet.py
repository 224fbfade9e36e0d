"""Benchmark of the fleet server: ``memcite push`` against a plain ``COPY``, and the fleet
``stats`` against the same SQL run by ``psql``.

    .venv/bin/python benchmarks/bench_fleet.py            # 1M citations pushed; stats at 10M
    .venv/bin/python benchmarks/bench_fleet.py --quick    # a tenth of that
    .venv/bin/python benchmarks/bench_fleet.py --url postgresql://user@host/db   # that server

Without ``--url`` a throw-away PostgreSQL is started (``tests/pg_server.py``) in a temporary
folder; with it, the benchmark makes (and drops) its own databases on that server. Every
figure is a median of rounds in which the two things compared run in turn, the order turning
round each round (interleaved, as the other benchmarks: a busy moment of the machine falls on
both); each round gets fresh databases (``CREATE DATABASE``).

1. Push of a ledger of 1,000,000 cited ids (250,000 replies of four ids, 250,000 cited
   entries, 50,000 memories; ``bench_stats.build_ledger``), into a fresh migrated database
   (the push makes the months' partitions itself; opening the connections is not timed),
   against a plain ``COPY`` (psycopg's ``cursor.copy(...).write_row``, one transaction) of the
   same rows into the same tables of another fresh database, its partitions made beforehand,
   the rows built in memory beforehand as the tuples push sends (push's own row building,
   run outside the timed part; the entries already checked). Three rounds. Target: push
   within 2x the plain copy.
2. A push of nothing new right after (same ledger, same server): target under 5% of the
   first push's time.
3. The fleet ``stats`` (``collect_fleet_stats``, connecting included) over a server filled
   with SQL (``generate_series``: 10,000,000 cited ids over 2,500,000 replies and as many
   cited entries, 50 machines, 100,000 memories in 130,000 inventory rows, the replies
   spread over 360 days, so 13 monthly partitions; 1% of the ids not UUIDs, 3% unknown,
   92% of the entries ``ok``; then ``VACUUM (ANALYZE)``), against ``psql -X -q -f`` running the
   same statements (``fleet_queries`` with the parameters inlined by psycopg's
   ``ClientCursor.mogrify``, in one ``BEGIN ... COMMIT``; output to /dev/null), five rounds
   after one warm-up run of each; the same with ``since`` 30 days back (the other months'
   partitions pruned). Target: within 2x psql. ``psql -A -t`` (unaligned, so psql need not
   find column widths over all the rows) runs in the same rounds, for reference.
4. A push interrupted (``KeyboardInterrupt`` from the progress callback after batch 3 of
   20,000 replies; ``--quick``: of 2,000) then run again counts nothing twice: the server's
   rows equal the ledger's (replies, cited ids, cited entries, memories). This one is an
   assertion: the benchmark exits 1 when it fails, 0 otherwise (targets missed included).

The full run takes ~6 minutes on a 2-CPU machine (two of them filling the server for figure 3);
``--quick`` under one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import psycopg  # noqa: E402
from bench_stats import NOW, build_ledger  # noqa: E402
from psycopg import sql  # noqa: E402
from psycopg.conninfo import conninfo_to_dict, make_conninfo  # noqa: E402

import pg_server  # noqa: E402
from memcite.fleet.connection import connect  # noqa: E402
from memcite.fleet.push import (  # noqa: E402
    _TABLES,
    MEMORY_COLUMNS,
    _batch_rows,
    _EntryChecker,
    _read_batch,
    push_ledger,
)
from memcite.fleet.report import (  # noqa: E402
    FleetScope,
    collect_fleet_stats,
    fleet_queries,
    query_parameters,
)
from memcite.fleet.schema import ensure_months, migrate, month_of  # noqa: E402
from memcite.ledger.store import open_store  # noqa: E402
from memcite.retention.checks import MemoryFolder  # noqa: E402
from memcite.retention.stats import inventory_knew  # noqa: E402

DAY = 86_400
PSQL = "/usr/bin/psql"
MACHINE = "bench-machine"
MACHINES_SQL = ("SELECT name FROM fleet_machines WHERE %(machine_id)s::integer IS NULL"
                " OR id = %(machine_id)s ORDER BY name")  # collect_fleet_stats's last question


class Server:
    """A PostgreSQL server on which the benchmark makes and drops its own databases."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.admin = psycopg.connect(url, autocommit=True)
        self.made: list[str] = []

    def fresh(self, tag: str) -> str:
        name = f"bench_fleet_{os.getpid()}_{len(self.made)}_{tag}"
        self.admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self.made.append(name)
        return make_conninfo(self.url, dbname=name)

    def drop(self, url: str) -> None:
        name = conninfo_to_dict(url)["dbname"]
        self.admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))
        if name in self.made:
            self.made.remove(name)

    def close(self) -> None:
        for name in list(self.made):
            self.admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))
        self.made.clear()
        self.admin.close()


# --------------------------------------------------------------------------- push and copy


def _push(db: str, root: str, url: str, **options):
    """One ``push_ledger`` as ``memcite push`` runs it; (its report, seconds of the push)."""
    local = open_store(db, readonly=True)
    server = connect(url, autocommit=True)
    folder = MemoryFolder(root, known_once=inventory_knew(local, None))
    try:
        started = time.perf_counter()
        report = push_ledger(local, server, server_name="bench", machine=MACHINE,
                             ledger=os.path.realpath(db), folder=folder, now=NOW, **options)
        return report, time.perf_counter() - started
    finally:
        folder.close()
        server.close()
        local.close()


def _rows_as_pushed(db: str, root: str):
    """The tuples push sends for the whole ledger (machine 1), built by push's own code:
    [(table, columns, rows)], and the months of the replies."""
    local = open_store(db, readonly=True)
    folder = MemoryFolder(root, known_once=inventory_knew(local, None))
    try:
        batch = _read_batch(local, 0, 1 << 62, None)
        tables = _batch_rows(1, batch, _EntryChecker(folder))
        memories = [(1, *row) for row in local.execute(
            f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories")]
    finally:
        folder.close()
        local.close()
    copies = [(table, columns, rows) for (table, columns), rows in zip(_TABLES, tables,
                                                                       strict=True)]
    copies.append(("fleet_memories", ("machine_id", *MEMORY_COLUMNS), memories))
    return copies, batch["months"]


def _plain_copy(url: str, copies, months) -> float:
    """The baseline: the rows COPYed into a migrated database, partitions made; seconds."""
    conn = connect(url, autocommit=True)
    try:
        migrate(conn)
        ensure_months(conn, months, set())
        started = time.perf_counter()
        with conn.transaction():
            cur = conn.cursor()
            for table, columns, rows in copies:
                with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
        return time.perf_counter() - started
    finally:
        conn.close()


def _ledger_counts(db: str) -> dict[str, int]:
    local = open_store(db, readonly=True)
    try:
        return {table: local.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("replies", "cited_ids", "cited_entries", "memories")}
    finally:
        local.close()


def _server_counts(url: str) -> dict[str, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {local: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for local, table in (("replies", "fleet_replies"),
                                     ("cited_ids", "fleet_cited_ids"),
                                     ("cited_entries", "fleet_cited_entries"),
                                     ("memories", "fleet_memories"))}


def bench_push(server: Server, db: str, root: str, rounds: int, results: dict) -> None:
    started = time.perf_counter()
    copies, months = _rows_as_pushed(db, root)
    print(f"  rows for the plain copy built in {time.perf_counter() - started:.1f} s (untimed):"
          + ", ".join(f" {table} {len(rows):,}" for table, _, rows in copies))
    pushes, repushes, plain = [], [], []
    for round_ in range(rounds):
        def push_round(round_: int = round_) -> None:
            url = server.fresh("push")
            with connect(url, autocommit=True) as conn:
                migrate(conn)  # as a server in use: the schema there, the months not yet
            report, seconds = _push(db, root, url)
            again, again_seconds = _push(db, root, url)
            assert again.up_to_date and not again.replies, again.to_dict()
            pushes.append(seconds)
            repushes.append(again_seconds)
            print(f"  round {round_ + 1}: push {seconds:6.2f} s ({report.replies:,} replies,"
                  f" {report.citations:,} ids, {report.entries:,} entries,"
                  f" {report.memories:,} memories, {report.batches} batches);"
                  f" push again {again_seconds * 1000:6.0f} ms")
            server.drop(url)

        def copy_round(round_: int = round_) -> None:
            url = server.fresh("copy")
            seconds = _plain_copy(url, copies, months)
            plain.append(seconds)
            print(f"  round {round_ + 1}: plain COPY {seconds:6.2f} s")
            server.drop(url)

        turns = [push_round, copy_round]
        for step in turns[round_ % 2:] + turns[:round_ % 2]:
            step()
    results["push"] = statistics.median(pushes)
    results["repush"] = statistics.median(repushes)
    results["copy"] = statistics.median(plain)
    results["push_citations"] = len(copies[1][2])


def bench_interrupted(server: Server, db: str, root: str, batch: int, results: dict) -> bool:
    url = server.fresh("interrupted")
    try:
        def interrupt(report, _last) -> None:
            if report.batches == 3:
                raise KeyboardInterrupt

        try:
            _push(db, root, url, batch_replies=batch, progress=interrupt)
        except KeyboardInterrupt:
            pass
        else:
            raise SystemExit("the push was not interrupted: the ledger has under 4 batches")
        part = _server_counts(url)
        report, _seconds = _push(db, root, url, batch_replies=batch)
        server_counts = _server_counts(url)
    finally:
        server.drop(url)
    ledger = _ledger_counts(db)
    same = server_counts == ledger
    print(f"  interrupted after 3 batches of {batch:,} replies: the server had {part}")
    print(f"  run again ({report.batches} batches, {report.replies:,} replies sent):"
          f" server {server_counts}")
    print(f"  ledger {ledger} -> {'same' if same else 'DIFFERENT'}")
    results["interrupted"] = (same, part, server_counts, ledger)
    return same


# --------------------------------------------------------------------------- fleet stats


def _fill_sql(citations: int, memories: int, machines: int) -> list[str]:
    """SQL that fills a migrated fleet database (partitions made): ``citations`` cited ids in
    replies of four, one cited entry per reply, ``memories`` threads (30% of them held by two
    machines) over ``machines`` machines, the replies spread evenly over the 360 days to NOW."""
    replies = citations // 4
    span = 360 * DAY
    mask = 2147483647

    def h(expr: str, salt: int) -> str:
        return f"(hashint8(({expr})::bigint + {salt}) & {mask})"

    # replies in time order (as a ledger records them): each machine's rows go at the end of
    # its part of the primary key's index, as they would on a server in use
    at = f"{NOW - span} + i::bigint * {span} / {replies}"
    cwd = f"'/home/dev/project-' || ((i / {machines}) % 20)"
    machine = f"1 + i % {machines}"
    return [
        f"""INSERT INTO fleet_machines (id, name, first_push_at, last_push_at)
SELECT m, 'machine-' || lpad(m::text, 3, '0'), {NOW - 400 * DAY}, {NOW}
FROM generate_series(1, {machines}) m""",
        f"SELECT setval(pg_get_serial_sequence('fleet_machines', 'id'), {machines})",
        f"""INSERT INTO fleet_ledgers (machine_id, ledger, last_reply_id, pushed_at)
SELECT m, '/home/dev/.memcite/memcite.sqlite', 0, {NOW} FROM generate_series(1, {machines}) m""",
        f"""INSERT INTO fleet_replies
SELECT {machine}, 'key-' || i, 'id', repeat('0', 64), at,
  at + CASE WHEN i % 100 = 0 THEN 7200 ELSE 5 END, NULL, {cwd}, 'codex', 'default',
  'record', '/home/dev/.codex/memories', 1, 0, 0
FROM (SELECT i, {at} AS at FROM generate_series(0, {replies - 1}) i) r""",
        f"""INSERT INTO fleet_cited_ids
SELECT {machine}, 'key-' || i, {at}, pos,
  CASE WHEN roll < 10 THEN 'not-a-uuid-' || (x % 40) ELSE tid END,
  CASE WHEN roll < 10 THEN NULL ELSE tid END,
  1, (roll >= 10)::int, (roll >= 40)::int, {cwd}
FROM (SELECT i, pos, roll, x,
        CASE WHEN roll < 40 THEN md5('unknown-' || (x % 20000))::uuid::text
             ELSE md5('thread-' || floor({memories} * power((x % 1000003) / 1000003.0, 3))
                      ::bigint)::uuid::text END AS tid
      FROM (SELECT j / 4 AS i, j % 4 AS pos, {h('j', 1_000_003)} % 1000 AS roll,
                   {h('j', 7_000_001)} AS x
            FROM generate_series(0::bigint, {citations - 1}) j) s) t""",
        f"""INSERT INTO fleet_cited_entries
SELECT {machine}, 'key-' || i, {at}, 0, path, line_start, line_end, 'note', 5, 1,
  md5(path || ':' || line_start || '-' || line_end),
  outcome, CASE WHEN outcome = 'moved' THEN '[' || line_start + 10 || ', ' || line_end + 10
  || ']' END, path, {cwd}
FROM (SELECT i, CASE WHEN x % 400 < 20 THEN 'MEMORY.md'
                     ELSE 'rollout_summaries/topic-' || (x % 400) || '.md' END AS path,
        1 + (x / 400) % 197 AS line_start, 1 + (x / 400) % 197 + (x / 78800) % 3 AS line_end,
        CASE WHEN o < 92 THEN 'ok' WHEN o < 95 THEN 'changed' WHEN o < 97 THEN 'moved'
             WHEN o < 98 THEN 'outside_root' WHEN o < 99 THEN 'missing'
             ELSE 'out_of_range' END AS outcome
      FROM (SELECT i, {h('i', 3_000_017)} AS x, {h('i', 5_000_011)} % 100 AS o
            FROM generate_series(0, {replies - 1}) i) s) e""",
        f"""INSERT INTO fleet_memories (machine_id, {', '.join(MEMORY_COLUMNS)})
SELECT m, md5('thread-' || k)::uuid::text, {NOW} - {h('k', 11)} % {400 * DAY},
  {NOW} - {h('k', 13)} % {400 * DAY}, 'slug-' || k, 'topic-' || k || '.md',
  '/home/dev/project-' || (k % 20), 'main', (k % 10 = 0)::int, 1, 1,
  {h('k', 17)} % 50, {NOW} - {h('k', 19)} % {200 * DAY},
  CASE WHEN k % 4 = 0 THEN NULL ELSE {h('k', 23)} % 5 END,
  CASE WHEN k % 4 = 0 THEN NULL ELSE {NOW} - {h('k', 29)} % {200 * DAY} END,
  CASE WHEN k % 20 = 0 THEN 'rollout_summary' ELSE 'stage1_outputs' END,
  '/home/dev/.codex', {NOW}, CASE WHEN k % 50 = 1 THEN {NOW - 10 * DAY} END,
  CASE WHEN k % 33 = 2 THEN {NOW - 5 * DAY} END
FROM (SELECT k, 1 + k % {machines} AS m FROM generate_series(0, {memories - 1}) k
      UNION ALL SELECT k, 1 + (k + 7) % {machines} FROM generate_series(0, {memories - 1}) k
      WHERE k % 10 < 3) s""",
        f"""INSERT INTO fleet_syncs
SELECT m, '/home/dev/.codex', 'v1', {NOW}, {memories} FROM generate_series(1, {machines}) m""",
        f"""INSERT INTO fleet_sections
SELECT 1, p, 'Section ' || p, 'MEMORY.md', 1 + (p % 5 > 0)::int, 1 + 4 * p, 4 + 4 * p, {NOW}
FROM generate_series(0, 99) p""",
        "VACUUM (ANALYZE)",  # as a server in use: hint bits set, visibility map made
    ]


def fill_server(url: str, citations: int, memories: int, machines: int) -> dict[str, int]:
    with connect(url, autocommit=True) as conn:
        migrate(conn)
        months = {month_of(NOW - day * DAY) for day in range(0, 361)}
        ensure_months(conn, months, set())
        for statement in _fill_sql(citations, memories, machines):
            started = time.perf_counter()
            conn.execute(statement)
            took = time.perf_counter() - started
            if took > 1:
                print(f"    {took:6.1f} s  {' '.join(statement.split()[:3])}")
        counts = {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                  for table in ("fleet_replies", "fleet_cited_ids", "fleet_cited_entries",
                                "fleet_memories")}
        counts["months"] = len(months)
    return counts


def _psql_script(url: str, folder: str, since: int | None, limit: int) -> str:
    params = query_parameters(None, FleetScope(), as_of=NOW, max_unused_days=30, since=since)
    with psycopg.connect(url) as conn:
        cur = psycopg.ClientCursor(conn)
        statements = [cur.mogrify(query, params).strip()
                      for query in (*fleet_queries("memcite", limit).values(), MACHINES_SQL)]
    path = os.path.join(folder, f"stats-{'all' if since is None else 'since'}.sql")
    with open(path, "w") as handle:
        handle.write("BEGIN;\n" + "".join(f"{s};\n" for s in statements) + "COMMIT;\n")
    return path


def _python_stats(url: str, since: int | None, limit: int) -> Callable[[], None]:
    def run() -> None:
        conn = connect(url, autocommit=True)  # as ``memcite stats --db postgresql://`` does
        try:
            collect_fleet_stats(conn, scope=FleetScope(), as_of=NOW, max_unused_days=30,
                                since=since, limit=limit)
        finally:
            conn.close()
    return run


def _psql(script: str, url: str, *options: str) -> Callable[[], None]:
    def run() -> None:
        with open(os.devnull, "wb") as sink:
            done = subprocess.run([PSQL, "-X", "-q", *options, "-v", "ON_ERROR_STOP=1", "-f",
                                   script, url],
                                  stdout=sink, stderr=subprocess.PIPE)
        if done.returncode != 0:
            raise SystemExit(f"psql failed: {done.stderr.decode().strip()}")
    return run


def _interleaved(runs: dict[str, Callable[[], None]], rounds: int) -> dict[str, list[float]]:
    """Each callable timed once a round, the order turning round each round."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for round_ in range(rounds):
        turn = round_ % len(names)
        for name in names[turn:] + names[:turn]:
            started = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - started)
    return times


def bench_stats(server: Server, folder: str, citations: int, memories: int, machines: int,
                rounds: int, results: dict) -> None:
    url = server.fresh("stats")
    try:
        started = time.perf_counter()
        counts = fill_server(url, citations, memories, machines)
        print(f"  filled in {time.perf_counter() - started:.1f} s: "
              + ", ".join(f"{name} {n:,}" for name, n in counts.items()))
        results["stats_sizes"] = counts
        limit = 20
        for label, since in (("all", None), ("since 30 days", NOW - 30 * DAY)):
            script = _psql_script(url, folder, since, limit)
            # psql -A -t: the same, its output unaligned (no column widths to find over all
            # the rows): what the SQL costs with less of psql's own formatting in it
            runs = {"python": _python_stats(url, since, limit), "psql": _psql(script, url),
                    "psql -A -t": _psql(script, url, "-A", "-t")}
            for run in runs.values():  # warm: the server's caches, as a second report
                run()
            times = _interleaved(runs, rounds)
            medians = {name: statistics.median(values) for name, values in times.items()}
            results[f"stats {label}"] = medians
            print(f"  {label} (medians of {rounds}): "
                  + "; ".join(f"{name} {medians[name] * 1000:.0f} ms ("
                              + " ".join(f"{t * 1000:.0f}" for t in values) + ")"
                              for name, values in times.items()))
    finally:
        server.drop(url)


# --------------------------------------------------------------------------- the run


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes")
    parser.add_argument("--url", default=None,
                        help="an existing PostgreSQL (its databases made and dropped here)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of push against copy")
    parser.add_argument("--stats-rounds", type=int, default=5, help="rounds of stats and psql")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    citations, entries, memories = 1_000_000 // scale, 250_000 // scale, 50_000 // scale
    stats_citations, stats_memories, machines = 10_000_000 // scale, 100_000 // scale, 50
    batch = 20_000 // scale

    folder = tempfile.mkdtemp(prefix="memcite-bench-fleet-", dir="/tmp")
    pg_folder = None
    server = None
    started_all = time.perf_counter()
    results: dict = {}
    try:
        if args.url:
            url = args.url
        else:
            pg_folder = tempfile.mkdtemp(prefix="memcite-bench-pg-", dir="/tmp")
            url = pg_server.start(pg_folder)
        server = Server(url)
        version = server.admin.execute("SHOW server_version").fetchone()[0]
        print(f"PostgreSQL {version} ({'--url' if args.url else 'tests/pg_server.py'})")

        root = os.path.join(folder, "codex_home", "memories")
        db = os.path.join(folder, "memcite.sqlite")
        started = time.perf_counter()
        build_ledger(db, root, memories=memories, citations=citations, entries=entries)
        sizes = _ledger_counts(db)
        print(f"ledger built in {time.perf_counter() - started:.1f} s: "
              + ", ".join(f"{name} {n:,}" for name, n in sizes.items()))

        print(f"1-2. push against a plain COPY ({args.rounds} rounds, fresh databases):")
        bench_push(server, db, root, args.rounds, results)
        print(f"3. fleet stats at {stats_citations:,} cited ids against psql:")
        bench_stats(server, folder, stats_citations, stats_memories, machines,
                    args.stats_rounds, results)
        print(f"4. a push interrupted after batch 3 ({batch:,} replies a batch), run again:")
        same = bench_interrupted(server, db, root, batch, results)
    finally:
        if server is not None:
            server.close()
        if pg_folder is not None:
            pg_server.stop(pg_folder)
        shutil.rmtree(folder, ignore_errors=True)

    push, copy, repush = results["push"], results["copy"], results["repush"]
    ids = results["push_citations"]
    print()
    print(f"{'figure':<44} {'value':>22} {'target':>10}  verdict")
    print(f"{'push ' + format(ids, ',') + ' cited ids (median)':<44} {push:>20.2f} s"
          f" {'':>10}  ({ids / push:,.0f} ids/s)")
    print(f"{'plain COPY of the same rows (median)':<44} {copy:>20.2f} s {'':>10}"
          f"  ({ids / copy:,.0f} ids/s)")
    ratio = push / copy
    print(f"{'push / plain COPY':<44} {ratio:>21.2f}x {'<= 2x':>10}  {_verdict(ratio <= 2)}")
    share = repush / push
    print(f"{'push again, nothing new (median)':<44} {repush * 1000:>19.0f} ms"
          f" {'':>10}")
    print(f"{'push again / first push':<44} {share * 100:>21.1f}% {'< 5%':>10}"
          f"  {_verdict(share < 0.05)}")
    for label in ("all", "since 30 days"):
        medians = results[f"stats {label}"]
        python, psql, plain = medians["python"], medians["psql"], medians["psql -A -t"]
        ratio = python / psql
        print(f"{'stats ' + label + ': collect_fleet_stats':<44} {python * 1000:>19.0f} ms")
        print(f"{'stats ' + label + ': psql, same SQL':<44} {psql * 1000:>19.0f} ms")
        print(f"{'stats ' + label + ': python / psql':<44} {ratio:>21.2f}x {'<= 2x':>10}"
              f"  {_verdict(ratio <= 2)}")
        print(f"{'stats ' + label + ': psql -A -t (for reference)':<44} {plain * 1000:>19.0f} ms"
              f" {'':>10}  (python / it {python / plain:.2f}x)")
    print(f"{'interrupted push, run again: counts':<44} {'equal' if same else 'DIFFERENT':>22}"
          f" {'equal':>10}  {_verdict(same)}")
    print(f"total {time.perf_counter() - started_all:.0f} s")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
