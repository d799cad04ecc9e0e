"""Spark for engines/read: a local[2] SparkSession with Iceberg's runtime, and the catalogs it reads through.

One session serves any number of reads (the engines server keeps one for a whole test suite: a JVM
per read would cost 20+ s each). Catalogs are added to the running session as reads ask for them —
Spark loads a catalog by name on first use from the session's `spark.sql.catalog.<name>.*` settings:

- filesystem, a table directory: a `hadoop` catalog whose warehouse is the directory's grandparent,
  the table `<namespace dir>.<table dir>` in it (Spark's Hadoop catalog over the Hadoop layout floe's
  filesystem catalog writes);
- filesystem, a metadata file: registered (`register_table`) in a throwaway JdbcCatalog on SQLite
  under a fresh name — Spark's path source resolves directories only, and the in-memory catalog
  reads through an in-memory FileIO;
- rest: a `rest` catalog;
- sql: a `jdbc` catalog (JdbcCatalog, schema version V1 as floe writes it). Its Spark name must be
  the SQL catalog's `catalog_name` (JdbcCatalog stores the name it is given in every row), so a
  second database with the same catalog name replaces the first one's settings and the session's
  catalogs are reloaded;
- a REST or SQL catalog with `configs`: the catalog a Spark config file defines
  (`spark.sql.catalog.<name>.*`, engine_configs.py), under its own name — e.g. S3FileIO on S3.

Every catalog is configured with `cache-enabled=false`: a table another process commits to (floe
streaming while Spark maintains it) is read as it is now, not as Spark cached it.
"""

import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time

from catalogs import jdbc_url, local_path, parse_identifier, sql_parts, sql_warehouse
from engine_errors import Refused

HOME = os.environ.get("FLOE_ENGINES_HOME") or os.path.expanduser("~/.cache/floe-engines")


def quote(name):
    return "`" + name.replace("`", "``") + "`"


def java_message(e):
    java = getattr(e, "java_exception", None)  # py4j: the message is on the Java side
    text = java.toString() if java is not None else str(e)
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[0] if lines else type(e).__name__


class SparkEngine:
    def __init__(self):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # local[2] needs no network: keep the driver on loopback
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession

        jars = [os.path.join(HOME, "spark", f) for f in sorted(os.listdir(os.path.join(HOME, "spark"))) if f.endswith(".jar")]
        self.scratch = tempfile.mkdtemp(prefix="floe-spark-")
        self.spark = (
            SparkSession.builder.master("local[2]")
            .appName("floe-engines")
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
            .config("spark.sql.catalog.reg", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.reg.type", "jdbc")
            .config("spark.sql.catalog.reg.uri", f"jdbc:sqlite:{self.scratch}/catalog.db")
            .config("spark.sql.catalog.reg.warehouse", f"file://{self.scratch}/warehouse")
            .config("spark.sql.catalog.reg.cache-enabled", "false")
            .getOrCreate()
        )
        self.spark.sparkContext.setLogLevel("ERROR")
        self.catalogs = {}  # Spark catalog name → the settings it was given
        self.lock = threading.RLock()

    def stop(self):
        try:
            self.spark.stop()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)

    # -----------------------------------------------------------------------------------------------

    def _configure(self, name, settings):
        settings = {"": "org.apache.iceberg.spark.SparkCatalog", ".cache-enabled": "false", **settings}
        known = self.catalogs.get(name)
        if known == settings:
            return
        for k in known or {}:
            if k not in settings:
                # e.g. `.type` of one config beside `.catalog-impl` of the next: Iceberg refuses both
                self.spark.conf.unset(f"spark.sql.catalog.{name}{k}")
        for k, v in settings.items():
            self.spark.conf.set(f"spark.sql.catalog.{name}{k}", v)
        if known is not None:
            # a catalog Spark already loaded keeps its old settings until the catalogs are reloaded
            self.spark._jsparkSession.sessionState().catalogManager().reset()
        self.catalogs[name] = settings

    def resolve(self, catalog, target):
        """(Spark catalog name, identifier within it as SQL, cleanup) of `target` in `catalog`."""
        kind = catalog["type"]
        if kind == "filesystem":
            path = local_path(target)
            if path.endswith(".metadata.json"):
                name = "r" + hashlib.sha1(f"{path}:{time.time()}".encode()).hexdigest()[:12]
                self.spark.sql(f"CALL reg.system.register_table(table => 'r.{name}', metadata_file => 'file://{path}')")
                return "reg", f"r.{name}", lambda: self.spark.sql(f"DROP TABLE IF EXISTS reg.r.{name}")
            path = path.rstrip("/")
            warehouse = os.path.dirname(os.path.dirname(path))
            name = "fs_" + hashlib.sha1(warehouse.encode()).hexdigest()[:10]
            self._configure(name, {".type": "hadoop", ".warehouse": "file://" + warehouse})
            return name, f"{quote(os.path.basename(os.path.dirname(path)))}.{quote(os.path.basename(path))}", None
        namespace, table = parse_identifier(target)
        ident = ".".join(quote(x) for x in (*namespace, table))
        if catalog.get("configs"):
            from engine_configs import spark_catalog

            name, settings = spark_catalog(catalog["configs"], kind)
            self._configure(name, settings)
            return name, ident, None
        if kind == "rest":
            name = "rest_" + hashlib.sha1(catalog["uri"].encode()).hexdigest()[:10]
            settings = {".type": "rest", ".uri": catalog["uri"]}
            if catalog.get("warehouse"):
                settings[".warehouse"] = catalog["warehouse"]
            if catalog.get("token"):
                settings[".token"] = catalog["token"]
            self._configure(name, settings)
            return name, ident, None
        p = sql_parts(catalog)
        name = catalog.get("name", "floe")
        settings = {
            ".type": "jdbc",
            ".uri": jdbc_url(catalog),
            ".jdbc.user": p["user"],
            ".jdbc.schema-version": "V1",
            ".warehouse": sql_warehouse(catalog),
        }
        if p["password"]:
            settings[".jdbc.password"] = p["password"]
        self._configure(name, settings)
        return name, ident, None

    def read(self, catalog, target):
        """The rows as lists, in the table's column order. Raises Refused with Spark's message."""
        with self.lock:
            cleanup = None
            try:
                name, ident, cleanup = self.resolve(catalog, target)
                return [list(r) for r in self.spark.table(f"{quote(name)}.{ident}").collect()]
            except Refused:
                raise
            except Exception as e:
                raise Refused(java_message(e)) from e
            finally:
                if cleanup:
                    try:
                        cleanup()
                    except Exception:
                        pass

    def sql(self, catalog, target, statements):
        """Runs statements with {catalog} and {table} (the identifier within the catalog, as a string
        literal's content) substituted; returns each statement's rows as strings."""
        with self.lock:
            name, ident, cleanup = self.resolve(catalog, target)
            try:
                out = []
                for s in statements:
                    text = s.replace("{catalog}", quote(name)).replace("{table}", ident.replace("'", "\\'")).replace("{qualified}", f"{quote(name)}.{ident}")
                    try:
                        rows = self.spark.sql(text).collect()
                    except Exception as e:
                        out.append({"statement": text, "error": java_message(e)})
                        continue
                    out.append({"statement": text, "rows": [[None if v is None else str(v) for v in r] for r in rows]})
                return out
            finally:
                if cleanup:
                    cleanup()

    def delete_orphan_files(self, catalog, target, older_than_ms):
        """Iceberg's DeleteOrphanFiles action. The `remove_orphan_files` procedure refuses an older_than
        under 24 hours ("you can use the Action API to remove orphan files with an arbitrary interval")."""
        with self.lock:
            name, ident, cleanup = self.resolve(catalog, target)
            try:
                jvm = self.spark._jvm
                js = self.spark._jsparkSession
                # resolving the table through SQL first instantiates the catalog in the session's
                # catalog manager: Spark3Util's name parsing takes an unloaded catalog's name for a
                # namespace of spark_catalog (REQUIRES_SINGLE_PART_NAMESPACE)
                self.spark.table(f"{quote(name)}.{ident}").schema
                table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(js, f"{quote(name)}.{ident}")
                action = jvm.org.apache.iceberg.spark.actions.SparkActions.get(js).deleteOrphanFiles(table).olderThan(int(older_than_ms))
                result = action.execute()
                locations = []
                it = result.orphanFileLocations().iterator()
                while it.hasNext():
                    locations.append(str(it.next()))
                return locations
            except Exception as e:
                raise Refused(java_message(e)) from e
            finally:
                if cleanup:
                    cleanup()
