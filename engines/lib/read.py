"""engines/read <engine> <table>: one engine reads an Iceberg table and prints floe scan's JSON lines.

<table> is a filesystem-catalog (Hadoop layout) table directory or a .metadata.json file. Each engine
is pointed at it the way its users would: Spark through HadoopTables (a path) or, for a metadata file,
a throwaway JdbcCatalog's register_table; DuckDB with iceberg_scan; PyIceberg with StaticTable; Iceberg's
Java generic reader with HadoopTables / StaticTableOperations; Trino through a REST catalog (`floe
catalog serve` with the register endpoint, engines/lib/trino.py). Rows are printed one JSON object per
line in floe scan's form (floe_json.py) and sorted, so two engines' outputs diff line by line.

Exit codes: 0 rows printed; 1 the engine refused the table (last stderr line "engines/read: <engine>
refused: <the engine's message>"); 2 usage; 3 the engine is not installed; 4 the engine could not be
run (stderr says why; nothing is known about the table); 5 a bug in engines/read itself.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import floe_json  # noqa: E402
from engine_errors import Refused, SetupError  # noqa: E402

ENGINES = ("spark", "trino", "duckdb", "pyiceberg", "iceberg-java")
HOME = os.environ.get("FLOE_ENGINES_HOME") or os.path.expanduser("~/.cache/floe-engines")


def fail_usage(msg):
    sys.stderr.write(f"engines/read: {msg}\nusage: engines/read <{'|'.join(ENGINES)}> <table directory | metadata.json>\n")
    sys.exit(2)


# ---------------------------------------------------------------------------------------------------
# the table's metadata (for the schema that types every value)


def current_metadata_file(target):
    """The metadata file a Hadoop-layout reader resolves for `target`, as HadoopTableOperations does."""
    if target.endswith(".metadata.json"):
        return target
    meta = os.path.join(target, "metadata")
    hint = os.path.join(meta, "version-hint.text")
    version = None
    if os.path.exists(hint):
        text = open(hint).read().strip()
        if text.isdigit():
            version = int(text)
    if version is None:
        versions = [int(m.group(1)) for f in os.listdir(meta) if (m := re.fullmatch(r"v(\d+)\.metadata\.json", f))]
        if not versions:
            others = sorted(f for f in os.listdir(meta) if f.endswith(".metadata.json"))
            if others:
                return os.path.join(meta, others[-1])
            raise Refused(f"no metadata file under {meta}")
        version = max(versions)
    while os.path.exists(os.path.join(meta, f"v{version + 1}.metadata.json")):
        version += 1
    return os.path.join(meta, f"v{version}.metadata.json")


def local_path(location):
    return location[len("file://"):] if location.startswith("file://") else (location[len("file:"):] if location.startswith("file:") else location)


def schema_fields(metadata_file):
    with open(local_path(metadata_file)) as f:
        meta = json.load(f)
    if "schemas" in meta:
        schema = next(s for s in meta["schemas"] if s["schema-id"] == meta.get("current-schema-id", 0))
    else:
        schema = meta["schema"]
    return schema["fields"]


# ---------------------------------------------------------------------------------------------------
# engines: each returns (metadata file read, rows as lists of engine values in schema column order)


def read_duckdb(target):
    import duckdb
    import duckdb_ext

    con = duckdb_ext.init(duckdb.connect())
    # iceberg autoloads parquet and needs avro for manifests; the pip packages put them in a private
    # extension directory with autoinstall off, so load them explicitly.
    con.execute("LOAD avro")
    con.execute("LOAD iceberg")
    con.execute("SET TimeZone = 'UTC'")
    try:
        rows = con.execute("SELECT * FROM iceberg_scan(?)", [target]).fetchall()
    except duckdb.Error as e:
        raise Refused(str(e)) from e
    return current_metadata_file(target), rows


def read_pyiceberg(target):
    from pyiceberg.table import StaticTable

    try:
        table = StaticTable.from_metadata(target if target.endswith(".metadata.json") else target.rstrip("/"))
        arrow = table.scan().to_arrow()
    except Exception as e:  # PyIceberg signals unsupported features with ValueError / NotImplementedError
        raise Refused(f"{type(e).__name__}: {e}") from e
    columns = [arrow.column(i).to_pylist() for i in range(arrow.num_columns)]
    return table.metadata_location, [list(r) for r in zip(*columns)] if columns else []


def read_iceberg_java(target):
    d = os.path.join(HOME, "iceberg-java")
    cmd = [
        os.environ.get("JAVA", "java"),
        "-Xmx1g",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp",
        f"{d}/classes:{d}/lib/*",
        "floe.engines.IcebergDump",
        target,
    ]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        lines = [l for l in p.stderr.splitlines() if re.match(r"^(Exception in thread|[\w.$]+(Exception|Error):)", l)]
        raise Refused(lines[-1] if lines else p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}")
    out = p.stdout.splitlines()
    metadata = out[0][len("#metadata "):]
    return metadata, [json.loads(l) for l in out[1:]]


def read_spark(target):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # local[2] needs no network: keep the driver on loopback
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    jars = [os.path.join(HOME, "spark", f) for f in sorted(os.listdir(os.path.join(HOME, "spark"))) if f.endswith(".jar")]
    scratch = tempfile.mkdtemp(prefix="floe-spark-read-")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("floe-engines-read")
        .config("spark.jars", ",".join(jars))
        .config("spark.driver.memory", os.environ.get("FLOE_SPARK_DRIVER_MEMORY", "2g"))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        # a throwaway JdbcCatalog (SQLite) to register a metadata file in: the path source resolves
        # table directories only, and the in-memory catalog reads through an in-memory FileIO
        .config("spark.sql.catalog.reg", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.reg.type", "jdbc")
        .config("spark.sql.catalog.reg.uri", f"jdbc:sqlite:{scratch}/catalog.db")
        .config("spark.sql.catalog.reg.warehouse", f"file://{scratch}/warehouse")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        if target.endswith(".metadata.json"):
            # A path source resolves a table directory only; a metadata file is registered instead.
            spark.sql(f"CALL reg.system.register_table(table => 'r.t', metadata_file => 'file://{target}')")
            df = spark.table("reg.r.t")
            metadata = target
        else:
            df = spark.read.format("iceberg").load(target)
            metadata = current_metadata_file(target)
        rows = [list(r) for r in df.collect()]
    except Exception as e:
        java = getattr(e, "java_exception", None)  # py4j: the message is on the Java side
        text = java.toString() if java is not None else str(e)
        lines = [l for l in text.strip().splitlines() if l.strip()]
        raise Refused(lines[0] if lines else type(e).__name__) from e
    finally:
        spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    return metadata, rows


def read_trino(target):
    import trino_engine

    return trino_engine.read(target, current_metadata_file(target))


READERS = {"spark": read_spark, "duckdb": read_duckdb, "pyiceberg": read_pyiceberg, "iceberg-java": read_iceberg_java, "trino": read_trino}


def main(argv):
    if len(argv) != 2:
        fail_usage("expected an engine and a table")
    engine, target = argv
    if engine not in ENGINES:
        fail_usage(f"unknown engine {engine!r}")
    if not os.path.exists(local_path(target)):
        fail_usage(f"no such table directory or metadata file: {target}")
    target = os.path.abspath(local_path(target))
    os.environ["TZ"] = "UTC"
    time.tzset()
    started = time.monotonic()
    try:
        metadata, rows = READERS[engine](target)
        fields = schema_fields(metadata)
        lines = sorted(floe_json.row_json(fields, r) for r in rows)
    except Refused as e:
        sys.stderr.write(f"engines/read: {engine} refused: {e}\n")
        return 1
    except SetupError as e:
        sys.stderr.write(f"engines/read: {engine} could not run: {e}\n")
        return 4
    except Exception:
        # a bug here (e.g. a value the formatter does not know), not the engine's verdict on the table
        import traceback

        traceback.print_exc()
        sys.stderr.write(f"engines/read: internal error while reading with {engine}\n")
        return 5
    out = sys.stdout
    for line in lines:
        out.write(line + "\n")
    out.flush()
    if os.environ.get("FLOE_ENGINES_TIMING"):
        sys.stderr.write(f"engines/read: {engine} read {len(lines)} rows in {time.monotonic() - started:.1f} s\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
