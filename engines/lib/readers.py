"""Each engine reading one table through one catalog (catalogs.py), the way its users point it there.

    engine        filesystem                         rest                          sql (PostgreSQL)
    spark         hadoop catalog / register_table    `rest` catalog                JdbcCatalog
    trino         (via floe catalog serve, register) `rest` catalog                `jdbc` catalog
    duckdb        iceberg_scan                       ATTACH … (TYPE iceberg)       — (with --configs:
                                                                                   iceberg_scan of the
                                                                                   metadata file)
    pyiceberg     StaticTable                        RestCatalog                   SqlCatalog
    iceberg-java  HadoopTables / StaticTableOps      — (with --configs: RESTCatalog, JdbcCatalog)

With `--configs DIR` (catalogs.py, engine_configs.py) a REST or SQL read sets each engine up from its
own file in DIR — the way a user points it at a warehouse on S3, each through its own S3 client.

A reader returns the table's rows as lists of the engine's own values, in the table's column order;
engines/read types and prints them by the table's Iceberg schema. `Engines` holds what is worth
keeping between reads (a SparkSession, a Java reader process); the engines server keeps one for a
whole test suite, engines/read alone makes one per call.
"""

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time

from catalogs import current_metadata_file, local_path, parse_identifier, sql_warehouse, sqlalchemy_url
from engine_errors import Refused, SetupError

HOME = os.environ.get("FLOE_ENGINES_HOME") or os.path.expanduser("~/.cache/floe-engines")

ENGINES = ("spark", "trino", "duckdb", "pyiceberg", "iceberg-java")
SUPPORTED = {
    "spark": ("filesystem", "rest", "sql"),
    "trino": ("filesystem", "rest", "sql"),
    "duckdb": ("filesystem", "rest"),
    "pyiceberg": ("filesystem", "rest", "sql"),
    "iceberg-java": ("filesystem",),
}
# through the engines' own config files (engine_configs.py), every engine reaches both
SUPPORTED_WITH_CONFIGS = ("rest", "sql")


class Unsupported(Exception):
    """The engine has no way to reach this kind of catalog (a usage error, not a verdict on a table)."""


def _dq(name):
    return '"' + name.replace('"', '""') + '"'


# ---------------------------------------------------------------------------------------------------


def read_duckdb(catalog, target):
    import duckdb
    import duckdb_ext

    con = duckdb_ext.init(duckdb.connect())
    try:
        # iceberg autoloads parquet and needs avro for manifests; the pip packages put them in a private
        # extension directory with autoinstall off, so load them explicitly (httpfs: the REST client).
        con.execute("LOAD avro")
        con.execute("LOAD iceberg")
        con.execute("SET TimeZone = 'UTC'")
        # Rows are compared as multisets, so no order need be kept. Keeping it routes the result through
        # DuckDB's batch collector, which in 1.4.4 can fail a scan with equality deletes at random with
        # "INTERNAL Error: Pipeline batch index - gotten lower batch index" (a race between the scan's
        # pipelines, not a verdict on the table: the same table reads right on the next try).
        con.execute("SET preserve_insertion_order = false")
        if catalog.get("configs"):
            return _read_duckdb_configured(con, catalog, target)
        if catalog["type"] == "filesystem":
            try:
                return con.execute("SELECT * FROM iceberg_scan(?)", [target]).fetchall()
            except duckdb.Error as e:
                raise Refused(str(e)) from e
        con.execute("LOAD httpfs")
        namespace, name = parse_identifier(target)
        options = [f"TYPE iceberg", f"ENDPOINT '{catalog['uri']}'"]
        if catalog.get("token"):
            con.execute(f"CREATE SECRET floe_rest (TYPE iceberg, TOKEN '{catalog['token']}')")
            options.append("SECRET floe_rest")
        else:
            options.append("AUTHORIZATION_TYPE 'none'")
        try:
            con.execute(f"ATTACH '{catalog.get('warehouse', '')}' AS floe_rest_catalog ({', '.join(options)})")
        except duckdb.Error as e:
            raise SetupError(f"DuckDB could not attach the REST catalog {catalog['uri']}: {e}") from e
        try:
            return con.execute(f"SELECT * FROM floe_rest_catalog.{'.'.join(_dq(x) for x in (*namespace, name))}").fetchall()
        except duckdb.Error as e:
            raise Refused(str(e)) from e
    finally:
        con.close()


def _read_duckdb_configured(con, catalog, target):
    """DuckDB set up by its file in the configs directory: ATTACH (REST) or a secret and iceberg_scan."""
    import duckdb
    from catalogs import lookup_spec, metadata_location
    from engine_configs import duckdb_setup

    statements, alias = duckdb_setup(catalog["configs"], catalog["type"])
    for statement in statements:
        try:
            con.execute(statement)
        except duckdb.Error as e:
            # the statement itself may hold keys: name it by its first words only
            raise SetupError(f"DuckDB could not run the config's `{' '.join(statement.split()[:3])} …`: {e}") from e
    if catalog["type"] == "rest":
        if alias is None:
            raise SetupError("the DuckDB REST config has no ATTACH … AS <name> statement")
        namespace, name = parse_identifier(target)
        query, params = f"SELECT * FROM {_dq(alias)}.{'.'.join(_dq(x) for x in (*namespace, name))}", []
    else:
        # a JdbcCatalog has no DuckDB client: read the metadata file the catalog names, as
        # duckdb/iceberg-scan.sql says to
        query, params = "SELECT * FROM iceberg_scan(?)", [metadata_location(lookup_spec(catalog), target)[0]]
    try:
        return con.execute(query, params).fetchall()
    except duckdb.Error as e:
        raise Refused(str(e)) from e


def _pyiceberg_configured(catalog):
    from pyiceberg.catalog import load_catalog
    from engine_configs import pyiceberg_entry

    props = pyiceberg_entry(catalog["configs"], catalog["type"])
    # the entry's key is only a name in the file; a SqlCatalog's name is the catalog_name it reads
    name = catalog.get("name", "floe") if catalog["type"] == "sql" else "floe_rest"
    return load_catalog(name, **props)


def read_pyiceberg(catalog, target):
    try:
        if catalog["type"] == "filesystem":
            from pyiceberg.table import StaticTable

            table = StaticTable.from_metadata(target if target.endswith(".metadata.json") else target.rstrip("/"))
        else:
            namespace, name = parse_identifier(target)
            if catalog.get("configs"):
                cat = _pyiceberg_configured(catalog)
            elif catalog["type"] == "rest":
                from pyiceberg.catalog.rest import RestCatalog

                props = {"uri": catalog["uri"]}
                if catalog.get("warehouse"):
                    props["warehouse"] = catalog["warehouse"]
                if catalog.get("token"):
                    props["token"] = catalog["token"]
                cat = RestCatalog("floe_rest", **props)
            else:
                from pyiceberg.catalog.sql import SqlCatalog

                # the catalog name is data: SqlCatalog reads the rows whose catalog_name it is given
                cat = SqlCatalog(catalog.get("name", "floe"), uri=sqlalchemy_url(catalog), warehouse=sql_warehouse(catalog))
            table = cat.load_table((*namespace, name))
        arrow = table.scan().to_arrow()
    except (SetupError, Refused):
        raise
    except Exception as e:  # PyIceberg signals unsupported features with ValueError / NotImplementedError
        if type(e).__module__.startswith("sqlalchemy") or type(e).__module__.startswith("psycopg2"):
            raise SetupError(f"{type(e).__name__}: {e}") from e
        raise Refused(f"{type(e).__name__}: {e}") from e
    columns = [arrow.column(i).to_pylist() for i in range(arrow.num_columns)]
    return [list(r) for r in zip(*columns)] if columns else []


class JavaReader:
    """IcebergDump (engines/iceberg-java): one JVM per read, or one for many (`persistent`)."""

    def __init__(self, persistent):
        self.persistent = persistent
        self.proc = None
        self.lock = threading.Lock()

    def _cmd(self, *args):
        d = os.path.join(HOME, "iceberg-java")
        if not os.path.isdir(os.path.join(d, "classes")):
            raise SetupError(f"Iceberg Java is not installed in {d}: run npm run engines:install")
        return [os.environ.get("JAVA", "java"), "-Xmx1g", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", f"{d}/classes:{d}/lib/*", "floe.engines.IcebergDump", *args]

    def read(self, catalog, target):
        if catalog.get("configs"):
            # one line of JSON: the catalog's Iceberg properties and the table (IcebergDump.java)
            from engine_configs import iceberg_catalog_properties

            name, properties = iceberg_catalog_properties(catalog["configs"], catalog["type"])
            namespace, table = parse_identifier(target)
            target = json.dumps({"catalog": name, "properties": properties, "namespace": list(namespace), "table": table})
        elif catalog["type"] != "filesystem":
            raise Unsupported("iceberg-java reads tables by directory or metadata file, or through --configs")
        if not self.persistent:
            p = subprocess.run(self._cmd(target), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                sys.stderr.write(p.stderr)
                lines = [l for l in p.stderr.splitlines() if re.match(r"^(Exception in thread|[\w.$]+(Exception|Error):)", l)]
                message = lines[-1] if lines else p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
                raise Refused(re.sub(r'^Exception in thread "main" ', "", message))
            return [json.loads(l) for l in p.stdout.splitlines()[1:]]
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.proc = subprocess.Popen(self._cmd("--serve"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
            self.proc.stdin.write(target + "\n")
            self.proc.stdin.flush()
            rows = []
            while True:
                line = self.proc.stdout.readline()
                if line == "":
                    self.proc = None
                    raise SetupError("the Iceberg Java reader exited")
                line = line.rstrip("\n")
                if line.startswith("#end "):
                    if line == "#end ok":
                        return rows
                    raise Refused(line[len("#end refused "):])
                if not line.startswith("#metadata "):
                    rows.append(json.loads(line))

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Engines:
    """The engines of one engines/read call, or of the engines server (`persistent`)."""

    def __init__(self, persistent=False):
        self.persistent = persistent
        self._spark = None
        self._spark_lock = threading.Lock()
        self.java = JavaReader(persistent)

    def spark(self):
        with self._spark_lock:
            if self._spark is None:
                from spark_session import SparkEngine

                self._spark = SparkEngine()
            return self._spark

    def read(self, engine, catalog, target):
        if catalog.get("configs"):
            if catalog["type"] not in SUPPORTED_WITH_CONFIGS:
                raise Unsupported(f"--configs names engine configs of a rest or sql catalog, not {catalog['type']}")
        elif catalog["type"] not in SUPPORTED[engine]:
            raise Unsupported(f"{engine} reaches no {catalog['type']} catalog (it reads through: {', '.join(SUPPORTED[engine])})")
        if engine == "duckdb":
            return read_duckdb(catalog, target)
        if engine == "pyiceberg":
            return read_pyiceberg(catalog, target)
        if engine == "iceberg-java":
            return self.java.read(catalog, target)
        if engine == "spark":
            return self.spark().read(catalog, target)
        import trino_engine

        return trino_engine.read(catalog, target)

    def close(self):
        self.java.close()
        if self._spark is not None:
            self._spark.stop()
            self._spark = None


def read_lines(engines, engine, catalog, target):
    """(metadata file read, floe scan's JSON lines of the table, sorted) as `engine` reads it."""
    import floe_json
    from catalogs import metadata_location, schema_fields

    rows = engines.read(engine, catalog, target)
    # the schema that types every value: the one of the metadata file the catalog points at, looked up
    # by engines/read itself (a table that changes while it is read may show a newer schema here)
    metadata, s3 = metadata_location(catalog, target)
    fields = schema_fields(metadata, s3)
    return metadata, sorted(floe_json.row_json(fields, r) for r in rows)
