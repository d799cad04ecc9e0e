"""The catalogs engines/read reaches a table through, and what every engine needs to know about them.

A catalog is a plain dict (it travels as JSON between engines/read and the engines server):

  {"type": "filesystem"}                                   the table is a directory (Hadoop layout) or
                                                           a .metadata.json file, no catalog service
  {"type": "rest", "uri": "http://host:port", "warehouse": optional, "token": optional}
                                                           an Iceberg REST catalog (`floe catalog serve`)
  {"type": "sql", "url": "postgresql://user:pass@host:port/db", "name": "floe", "warehouse": optional}
                                                           Iceberg's JDBC catalog layout, as floe's `sql`
                                                           catalog writes it (url in floe's own form)
  {"type": "rest" | "sql", "configs": DIR, "name": optional}
                                                           the same catalogs, each engine set up from its
                                                           own file in DIR (engine_configs.py), e.g. a
                                                           warehouse on S3

A REST or SQL spec may carry "s3": the Iceberg `s3.*` properties engines/read reads metadata files on
S3 with (a REST catalog's LoadTableResult config is merged over them).

Each engine turns the spec into its own configuration (Spark catalog properties, a Trino catalog, a
DuckDB ATTACH, a PyIceberg catalog). The table's schema, which types every value engines/read prints,
is read from the metadata file the catalog points at, independently of the engine.
"""

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request

from engine_errors import Refused, SetupError

CATALOG_TYPES = ("filesystem", "rest", "sql")


def parse_identifier(text):
    """'ns.table' or 'ns1.ns2.table' → (namespace levels, table name). Names may not contain dots."""
    parts = text.split(".")
    if len(parts) < 2 or any(p == "" for p in parts):
        raise ValueError(f"expected <namespace>.<table> for a catalog table, got {text!r}")
    return tuple(parts[:-1]), parts[-1]


def label(catalog):
    if catalog["type"] == "rest":
        return f"rest {catalog['uri']}"
    if catalog["type"] == "sql":
        return f"sql {redact(catalog['url'])} (catalog {catalog.get('name', 'floe')})"
    return "filesystem"


def redact(url):
    return re.sub(r"://([^:@/]*):[^@/]*@", r"://\1:***@", url)


# ---------------------------------------------------------------------------------------------------
# REST


def rest_base(catalog):
    return catalog["uri"].rstrip("/")


def _rest_get(url, token=None, timeout=30):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # as PyIceberg and DuckDB do: ask for the table's storage credentials (served only where vended)
    headers["X-Iceberg-Access-Delegation"] = "vended-credentials"
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        body = e.read().decode(errors="replace")
        try:
            message = json.loads(body).get("error", {}).get("message", body)
        except ValueError:
            message = body
        if e.code == 404:
            raise Refused(f"the REST catalog has no such table: {message}") from e
        raise SetupError(f"the REST catalog answered {e.code}: {message}") from e
    except (urllib.error.URLError, OSError) as e:
        raise SetupError(f"the REST catalog at {url} is not reachable: {e}") from e


def rest_prefix(catalog):
    query = f"?warehouse={urllib.parse.quote(catalog['warehouse'])}" if catalog.get("warehouse") else ""
    config = _rest_get(f"{rest_base(catalog)}/v1/config{query}", catalog.get("token"))
    prefix = {**config.get("defaults", {}), **config.get("overrides", {})}.get("prefix")
    return f"/{prefix}" if prefix else ""


def rest_table_path(catalog, namespace, name):
    ns = "%1F".join(urllib.parse.quote(level, safe="") for level in namespace)
    return f"{rest_base(catalog)}/v1{rest_prefix(catalog)}/namespaces/{ns}/tables/{urllib.parse.quote(name, safe='')}"


# ---------------------------------------------------------------------------------------------------
# SQL (Iceberg's JDBC catalog layout)


def sql_parts(catalog):
    """floe's SQL catalog URL → its parts (PostgreSQL only: the engines' JDBC catalogs reach it)."""
    u = urllib.parse.urlsplit(catalog["url"])
    if u.scheme not in ("postgresql", "postgres"):
        raise SetupError(f"engines/read reaches SQL catalogs on PostgreSQL only (postgresql://…), got {redact(catalog['url'])}")
    query = urllib.parse.parse_qs(u.query)
    return {
        "host": u.hostname or "127.0.0.1",
        "port": u.port or 5432,
        "user": urllib.parse.unquote(u.username or "postgres"),
        "password": urllib.parse.unquote(u.password or ""),
        "database": urllib.parse.unquote(u.path.lstrip("/")) or "postgres",
        "schema": query.get("currentSchema", [None])[0],
    }


def jdbc_url(catalog):
    p = sql_parts(catalog)
    tail = f"?currentSchema={urllib.parse.quote(p['schema'])}" if p["schema"] else ""
    return f"jdbc:postgresql://{p['host']}:{p['port']}/{p['database']}{tail}"


def sqlalchemy_url(catalog):
    p = sql_parts(catalog)
    auth = urllib.parse.quote(p["user"], safe="") + (":" + urllib.parse.quote(p["password"], safe="") if p["password"] else "")
    tail = f"?options=-csearch_path%3D{urllib.parse.quote(p['schema'])}" if p["schema"] else ""
    return f"postgresql+psycopg2://{auth}@{p['host']}:{p['port']}/{p['database']}{tail}"


def sql_warehouse(catalog):
    # JdbcCatalog and Trino need one to start; reading a table does not use it
    return catalog.get("warehouse") or "file:///tmp/floe-engines-unused-warehouse"


def _sql_metadata_location(catalog, namespace, name):
    import psycopg2

    p = sql_parts(catalog)
    try:
        conn = psycopg2.connect(host=p["host"], port=p["port"], user=p["user"], password=p["password"] or None, dbname=p["database"], connect_timeout=10, options=f"-csearch_path={p['schema']}" if p["schema"] else None)
    except psycopg2.Error as e:
        raise SetupError(f"the SQL catalog database {redact(catalog['url'])} is not reachable: {e}") from e
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = %s AND table_namespace = %s AND table_name = %s",
                (catalog.get("name", "floe"), ".".join(namespace), name),
            )
            row = cur.fetchone()
    finally:
        conn.close()
    if row is None:
        raise Refused(f"the SQL catalog has no table {'.'.join(namespace)}.{name} (catalog_name {catalog.get('name', 'floe')})")
    return row[0]


# ---------------------------------------------------------------------------------------------------
# the table's metadata, whatever the catalog


def local_path(location):
    if location.startswith("file://"):
        return urllib.parse.unquote(location[len("file://"):])
    if location.startswith("file:"):
        return urllib.parse.unquote(location[len("file:"):])
    return location


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


def lookup_spec(catalog):
    """The spec engines/read's own look-ups use: a configs spec's PyIceberg entry, else the spec itself."""
    if catalog.get("configs"):
        from engine_configs import lookup_catalog

        return lookup_catalog(catalog["configs"], catalog["type"], catalog.get("name"))
    return catalog


def metadata_location(catalog, target):
    """(the current metadata file of the table `target` names in `catalog`, the s3.* settings to read it with)."""
    if catalog["type"] == "filesystem":
        return current_metadata_file(target), {}
    catalog = lookup_spec(catalog)
    namespace, name = parse_identifier(target)
    if catalog["type"] == "rest":
        loaded = _rest_get(rest_table_path(catalog, namespace, name), catalog.get("token"))
        return loaded["metadata-location"], {**catalog.get("s3", {}), **loaded.get("config", {})}
    return _sql_metadata_location(catalog, namespace, name), catalog.get("s3", {})


def read_file(location, s3=None):
    """A file's bytes: a local path or file: URI, or an s3:// object read with the Iceberg s3.* settings."""
    if not (location.startswith("s3://") or location.startswith("s3a://")):
        with open(local_path(location), "rb") as f:
            return f.read()
    from pyarrow import fs

    s3 = s3 or {}
    endpoint = s3.get("s3.endpoint")
    options = {"region": s3.get("s3.region") or s3.get("client.region") or "us-east-1"}
    if endpoint:
        u = urllib.parse.urlsplit(endpoint if "://" in endpoint else "http://" + endpoint)
        options["endpoint_override"] = u.netloc
        options["scheme"] = u.scheme
    if s3.get("s3.access-key-id"):
        options.update(access_key=s3["s3.access-key-id"], secret_key=s3.get("s3.secret-access-key"), session_token=s3.get("s3.session-token"))
    path = location.split("://", 1)[1]
    try:
        with fs.S3FileSystem(**options).open_input_stream(path) as stream:
            return stream.read()
    except OSError as e:
        raise SetupError(f"engines/read could not read {location} (endpoint {endpoint or 'AWS'}): {e}") from e


def schema_fields(metadata_file, s3=None):
    meta = json.loads(read_file(metadata_file, s3).decode("utf-8"))
    if "schemas" in meta:
        schema = next(s for s in meta["schemas"] if s["schema-id"] == meta.get("current-schema-id", 0))
    else:
        schema = meta["schema"]
    return schema["fields"]


def spec_from_args(kind, uri=None, name=None, warehouse=None, token=None, configs=None):
    if kind not in CATALOG_TYPES:
        raise ValueError(f"unknown catalog {kind!r} (expected {', '.join(CATALOG_TYPES)})")
    if kind == "filesystem":
        if configs:
            raise ValueError("--configs names engine configs of a rest or sql catalog")
        return {"type": "filesystem"}
    if configs:
        if uri or warehouse or token:
            raise ValueError("--configs takes every setting from the engine's file: drop --uri, --warehouse and --token")
        if not os.path.isdir(configs):
            raise ValueError(f"--configs {configs}: no such directory (expected one laid out like catalog/)")
        return {"type": kind, "configs": os.path.abspath(configs), **({"name": name} if name else {})}
    if not uri:
        raise ValueError(f"--catalog {kind} needs --uri (" + ("the REST catalog's base URL" if kind == "rest" else "the SQL catalog's postgresql://… URL, as in floe's catalog.url") + ")")
    spec = {"type": kind, ("uri" if kind == "rest" else "url"): uri}
    if kind == "sql":
        spec["name"] = name or "floe"
    if warehouse:
        spec["warehouse"] = warehouse
    if token:
        spec["token"] = token
    return spec
