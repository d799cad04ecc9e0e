"""engines/read: one engine reads an Iceberg table through one catalog and prints floe scan's JSON lines.

    engines/read [--catalog filesystem|rest|sql] [--uri URI] [--catalog-name NAME] [--warehouse W]
                 [--token T] <spark|trino|duckdb|pyiceberg|iceberg-java> <table>
    engines/read --catalog rest|sql --configs DIR [--catalog-name NAME] <engine> <table>

- `--catalog filesystem` (default): <table> is a table directory (Hadoop layout, as floe's filesystem
  catalog writes it) or a .metadata.json file.
- `--catalog rest --uri http://host:port`: an Iceberg REST catalog (e.g. `floe catalog serve`);
  <table> is `namespace.table`.
- `--catalog sql --uri postgresql://user:pass@host:port/db [--catalog-name floe]`: Iceberg's JDBC
  catalog tables as floe's `sql` catalog writes them (the URL in floe's `catalog.url` form);
  <table> is `namespace.table`.
- `--configs DIR` (with --catalog rest or sql): the engine is set up from its own config file in DIR,
  a directory laid out like the repository's catalog/ (engine_configs.py says which file) — how a
  user points the engine at a warehouse, on S3 for instance.

How each engine is pointed at each catalog: readers.py. Rows are printed one JSON object per line in
floe scan's form (floe_json.py), typed by the table's Iceberg schema, and sorted, so two engines'
outputs diff line by line. When an engines server runs (`engines/server start`), the read is done by
it (a warm SparkSession and Java reader); otherwise in this process. Trino reads go to the Trino
that `engines/trino start` keeps running, or to a throwaway one.

Exit codes: 0 rows printed; 1 the engine refused the table (last stderr line "engines/read: <engine>
refused: <the engine's message>"); 2 usage (including an engine that reaches no such catalog); 3 the
engine is not installed; 4 the engine could not be run (stderr says why; nothing is known about the
table); 5 a bug in engines/read itself.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from catalogs import CATALOG_TYPES, local_path, spec_from_args  # noqa: E402
from readers import ENGINES, Engines, read_lines  # noqa: E402


class Usage(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Usage(message)


def parse(argv):
    p = Parser(prog="engines/read", add_help=False)
    p.add_argument("--catalog", default="filesystem", choices=CATALOG_TYPES)
    p.add_argument("--uri")
    p.add_argument("--catalog-name")
    p.add_argument("--warehouse")
    p.add_argument("--token")
    p.add_argument("--configs")
    p.add_argument("engine", choices=ENGINES)
    p.add_argument("table")
    a = p.parse_args(argv)
    try:
        catalog = spec_from_args(a.catalog, a.uri, a.catalog_name, a.warehouse, a.token, a.configs)
    except ValueError as e:
        raise Usage(str(e)) from e
    table = a.table
    if catalog["type"] == "filesystem":
        if not os.path.exists(local_path(table)):
            raise Usage(f"no such table directory or metadata file: {table}")
        table = os.path.abspath(local_path(table))
    return a.engine, catalog, table


def main(argv):
    try:
        engine, catalog, table = parse(argv)
    except Usage as e:
        sys.stderr.write(f"engines/read: {e}\n{__doc__.split(chr(10) + chr(10))[1]}\n")
        return 2
    os.environ["TZ"] = "UTC"
    time.tzset()
    started = time.monotonic()
    import server

    # Trino runs as a server of its own (engines/trino start, found through $FLOE_TRINO_RUN): its
    # reads need nothing the engines server keeps warm
    state = server.running() if engine != "trino" else None
    if state is not None:
        answer = server.call(state, "/read", {"engine": engine, "catalog": catalog, "table": table})
    else:
        engines = Engines(persistent=False)
        try:
            answer = server.outcome(lambda: dict(zip(("metadata", "lines"), read_lines(engines, engine, catalog, table))))
        finally:
            engines.close()
    status = answer["status"]
    if status == "refused":
        sys.stderr.write(f"engines/read: {engine} refused: {answer['message']}\n")
        return 1
    if status == "unsupported":
        sys.stderr.write(f"engines/read: {answer['message']}\n")
        return 2
    if status == "setup":
        sys.stderr.write(f"engines/read: {engine} could not run: {answer['message']}\n")
        return 4
    if status != "ok":
        # a bug here (e.g. a value the formatter does not know), not the engine's verdict on the table
        sys.stderr.write(answer.get("message", "") + f"\nengines/read: internal error while reading with {engine}\n")
        return 5
    out = sys.stdout
    for line in answer["lines"]:
        out.write(line + "\n")
    out.flush()
    if os.environ.get("FLOE_ENGINES_TIMING"):
        via = " (engines server)" if state is not None else ""
        sys.stderr.write(f"engines/read: {engine} read {len(answer['lines'])} rows in {time.monotonic() - started:.1f} s{via}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
