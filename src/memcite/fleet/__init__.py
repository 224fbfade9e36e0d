"""The fleet: many machines' ledgers in one PostgreSQL, and the same report over all of them.

The way the data goes::

    each machine's SQLite ledger (the source of truth there)
        -> ``push`` (``memcite.fleet.push``): what the server lacks, in batches, each batch
           one transaction that also moves the machine's cursor (nothing counts twice)
        -> the server's tables (``memcite.fleet.schema``: named migrations, the log
           partitioned by month)
        -> ``stats --db postgresql://…`` (``memcite.fleet.report``): the report's questions
           asked in SQL there, answered in the same JSON contract as on one machine.

``memcite.fleet.connection`` finds the server (``--to``/``--db``, ``[fleet] url``, ``PG*``
variables) and keeps its password out of every message.
"""
