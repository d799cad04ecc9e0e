"""Engine configs as users write them: a directory laid out like the repository's catalog/ (the files
themselves, or a copy with other endpoints), which a read names with `--configs DIR`. Each engine is
then set up from its own file, not from settings engines/read makes up:

    engine        rest (`floe catalog serve`)                   sql (the JdbcCatalog tables)
    spark         spark/spark-defaults.rest.conf                spark/spark-defaults.jdbc.conf
    trino         trino/floe.properties                         trino/floe_jdbc.properties
    duckdb        duckdb/attach-rest.sql                        duckdb/iceberg-scan.sql (its S3 secret) +
                                                                iceberg_scan of the metadata file the
                                                                catalog names
    pyiceberg     pyiceberg/.pyiceberg.yaml, entry `floe`       the same file, entry `floe_sql`, loaded
                                                                under the catalog's name
    iceberg-java  the Spark file's `spark.sql.catalog.<name>.*` keys: they are Iceberg catalog
                  properties, which SparkCatalog hands to CatalogUtil.buildIcebergCatalog unchanged

What a file holds beyond the catalog is left to the engine's installation here: Spark's
`spark.jars.packages` (engines/install puts the runtime and iceberg-aws-bundle jars on the class
path), `spark.sql.extensions` (the session has them) and DuckDB's queries (only its INSTALL, LOAD,
SET, CREATE SECRET and ATTACH statements run). Trino's `${ENV:NAME}` values are taken from
engines/read's environment, as Trino takes them from its own.

engines/read's own look-ups (where the table's metadata is, its schema) use the PyIceberg file's entry
for that catalog: its `uri` and `token`, and its `s3.*` settings for reading the metadata file.
"""

import os
import re

from engine_errors import SetupError

FILES = {
    ("spark", "rest"): "spark/spark-defaults.rest.conf",
    ("spark", "sql"): "spark/spark-defaults.jdbc.conf",
    ("iceberg-java", "rest"): "spark/spark-defaults.rest.conf",
    ("iceberg-java", "sql"): "spark/spark-defaults.jdbc.conf",
    ("trino", "rest"): "trino/floe.properties",
    ("trino", "sql"): "trino/floe_jdbc.properties",
    ("duckdb", "rest"): "duckdb/attach-rest.sql",
    ("duckdb", "sql"): "duckdb/iceberg-scan.sql",
    ("pyiceberg", "rest"): "pyiceberg/.pyiceberg.yaml",
    ("pyiceberg", "sql"): "pyiceberg/.pyiceberg.yaml",
}
PYICEBERG_ENTRY = {"rest": "floe", "sql": "floe_sql"}


def _read(configs, relative):
    path = os.path.join(configs, relative)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise SetupError(f"the engine config {path} cannot be read: {e}") from e


def _lines(text):
    for line in text.splitlines():
        t = line.strip()
        if t and not t.startswith("#"):
            yield t


def spark_catalog(configs, kind):
    """(Spark catalog name, {'' | '.<property>': value}) of the file's Iceberg catalog."""
    conf = {}
    for t in _lines(_read(configs, FILES[("spark", kind)])):
        key, _, value = t.partition(" ")
        conf[key] = value.strip()
    names = [k[len("spark.sql.catalog."):] for k, v in conf.items() if k.startswith("spark.sql.catalog.") and k.count(".") == 3 and v.endswith("SparkCatalog")]
    if len(names) != 1:
        raise SetupError(f"{FILES[('spark', kind)]} should define exactly one Iceberg catalog (spark.sql.catalog.<name> org.apache.iceberg.spark.SparkCatalog), found {names}")
    prefix = f"spark.sql.catalog.{names[0]}"
    return names[0], {k[len(prefix):]: v for k, v in conf.items() if k == prefix or k.startswith(prefix + ".")}


def iceberg_catalog_properties(configs, kind):
    """(name, Iceberg catalog properties) from the Spark file: what Iceberg Java's CatalogUtil takes."""
    name, settings = spark_catalog(configs, kind)
    return name, {k[1:]: v for k, v in settings.items() if k != ""}


def trino_properties(configs, kind):
    """The Trino catalog file's properties, ${ENV:NAME} resolved from this process's environment."""
    props = {}
    for t in _lines(_read(configs, FILES[("trino", kind)])):
        key, _, value = t.partition("=")
        props[key.strip()] = value.strip()

    def env(m):
        if m.group(1) not in os.environ:
            raise SetupError(f"{FILES[('trino', kind)]} uses ${{ENV:{m.group(1)}}}, which is not set in engines/read's environment")
        return os.environ[m.group(1)]

    return {k: re.sub(r"\$\{ENV:([A-Za-z_][A-Za-z0-9_]*)\}", env, v) for k, v in props.items()}


_DUCKDB_SETUP = re.compile(r"^(INSTALL|LOAD|SET|CREATE\s+(OR\s+REPLACE\s+)?(PERSISTENT\s+|TEMPORARY\s+)?SECRET|ATTACH)\b", re.I)


def duckdb_setup(configs, kind):
    """The DuckDB file's set-up statements, in order, and the alias of its ATTACH (None without one)."""
    text = "\n".join(l for l in _read(configs, FILES[("duckdb", kind)]).splitlines() if not l.strip().startswith("--"))
    statements = [s.strip() for s in text.split(";") if _DUCKDB_SETUP.match(s.strip())]
    alias = None
    for s in statements:
        m = re.match(r"^ATTACH\s+'[^']*'\s+AS\s+(\w+)", s, re.I)
        if m:
            alias = m.group(1)
    return statements, alias


def pyiceberg_entry(configs, kind):
    """The PyIceberg file's entry for the catalog kind, as load_catalog's properties."""
    import strictyaml  # PyIceberg's own YAML reader (pyiceberg/utils/config.py)

    entry = PYICEBERG_ENTRY[kind]
    try:
        data = strictyaml.load(_read(configs, FILES[("pyiceberg", kind)])).data
    except strictyaml.YAMLError as e:
        raise SetupError(f"{FILES[('pyiceberg', kind)]} is not YAML PyIceberg reads: {e}") from e
    props = (data.get("catalog") or {}).get(entry)
    if not props:
        raise SetupError(f"{FILES[('pyiceberg', kind)]} has no catalog entry {entry!r}")
    return dict(props)


def lookup_catalog(configs, kind, name=None):
    """The catalog spec (catalogs.py) of engines/read's own look-ups, from the PyIceberg entry."""
    props = pyiceberg_entry(configs, kind)
    s3 = {k: v for k, v in props.items() if k.startswith("s3.") or k == "client.region"}
    if kind == "rest":
        spec = {"type": "rest", "uri": props["uri"], "s3": s3}
        if props.get("token"):
            spec["token"] = props["token"]
        return spec
    url = re.sub(r"^postgresql\+\w+://", "postgresql://", props["uri"])
    return {"type": "sql", "url": url, "name": name or "floe", "warehouse": props.get("warehouse"), "s3": s3}
