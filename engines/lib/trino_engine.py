"""Trino for engines/read: a one-node Trino 483 with Iceberg catalogs.

- A REST or SQL catalog (catalogs.py) becomes a Trino catalog of its own the first time a read names
  it: `CREATE CATALOG` (dynamic catalog management) with `iceberg.catalog.type=rest` or `jdbc`, the
  JDBC catalog's `catalog-name` being the SQL catalog's — or, with `configs`, with the properties of
  the Trino catalog file there (engine_configs.py: native S3 file system and all).
- A directory table (Trino has no Hadoop catalog) is reached through the catalog `iceberg`: a `floe
  catalog serve` over a SQL catalog (SQLite, in the run directory) whose warehouse contains the
  table, into which each read registers the table's current metadata file under a fresh name,
  queries it, and drops the name again (the files stay).

Trino takes 20-60 s to start, so a test suite starts one with `engines/trino start --warehouse DIR`
and every `engines/read trino` reuses it; without a running one, engines/read starts a throwaway
Trino (and `floe catalog serve` over the table's own directory) and stops it after.

Usage: engines/trino start [--warehouse DIR] | stop | status
"""

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from catalogs import current_metadata_file, jdbc_url, parse_identifier, sql_parts, sql_warehouse
from engine_errors import Refused, SetupError

HOME = os.environ.get("FLOE_ENGINES_HOME") or os.path.expanduser("~/.cache/floe-engines")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = os.environ.get("FLOE_TRINO_RUN") or os.path.join(HOME, "run", "trino")
JAVA25 = os.environ.get("FLOE_JAVA25_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
NAMESPACE = "floe_read"


def _versions():
    out = {}
    with open(os.path.join(REPO, "engines", "versions.env")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                out[k] = v
    return out


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # a zombie is not alive
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def _http(method, url, body=None, timeout=30):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
            return r.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, text


def _write_config(run, trino_port, rest_port, warehouse):
    etc = os.path.join(run, "etc")
    os.makedirs(os.path.join(etc, "catalog"), exist_ok=True)
    # catalogs an earlier Trino created here (CREATE CATALOG stores them in this directory) point at
    # services long gone
    for f in os.listdir(os.path.join(etc, "catalog")):
        if f != "iceberg.properties":
            os.remove(os.path.join(etc, "catalog", f))
    with open(os.path.join(etc, "config.properties"), "w") as f:
        f.write(
            "\n".join(
                [
                    "coordinator=true",
                    "node-scheduler.include-coordinator=true",
                    f"http-server.http.port={trino_port}",
                    f"discovery.uri=http://127.0.0.1:{trino_port}",
                    # modest: other test processes and engines share the machine
                    "query.max-memory=1GB",
                    "query.max-memory-per-node=1GB",
                    "node.environment=floe",
                    "node.id=floe-engines",
                    # announce and reach the coordinator on loopback only
                    "node.internal-address=127.0.0.1",
                    f"plugin.dir={HOME}/trino/plugin",
                    # REST and SQL catalogs are added by CREATE CATALOG as reads name them
                    "catalog.management=dynamic",
                    "catalog.store=file",
                    "",
                ]
            )
        )
    # the file catalog store reads its settings from etc/catalog-store.properties (Trino's cwd is `run`)
    with open(os.path.join(etc, "catalog-store.properties"), "w") as f:
        f.write(f"catalog.config-dir={etc}/catalog\n")
    with open(os.path.join(etc, "catalog", "iceberg.properties"), "w") as f:
        f.write(
            "\n".join(
                [
                    "connector.name=iceberg",
                    "iceberg.catalog.type=rest",
                    f"iceberg.rest-catalog.uri=http://127.0.0.1:{rest_port}",
                    # floe writes file:///abs locations; the local file system resolves them under "/"
                    "fs.local.enabled=true",
                    "local.location=/",
                    "",
                ]
            )
        )
    with open(os.path.join(run, "floe.yaml"), "w") as f:
        f.write(f"warehouse:\n  location: {json.dumps(warehouse)}\ncatalog:\n  type: sql\n  name: engines\n  url: {json.dumps('sqlite:' + os.path.join(run, 'catalog.db'))}\n")


def _start(run, warehouse, detach):
    if not os.path.isdir(os.path.join(HOME, "trino", "lib")):
        raise SetupError(f"Trino is not installed in {HOME}/trino: run npm run engines:install")
    os.makedirs(run, exist_ok=True)
    for f in ("catalog.db", "state.json"):
        if os.path.exists(os.path.join(run, f)):
            os.remove(os.path.join(run, f))
    trino_port, rest_port = _free_port(), _free_port()
    _write_config(run, trino_port, rest_port, warehouse)
    # the directory-read catalog is open to this Trino alone: a token meant for another catalog
    # serve (in the caller's environment, as the stack's configs use it) must not lock it
    env = {k: v for k, v in os.environ.items() if k not in ("FLOE_CATALOG_TOKEN", "FLOE_CATALOG_CREDENTIAL")}
    env["NO_COLOR"] = "1"
    serve_log = open(os.path.join(run, "serve.log"), "w")
    serve = subprocess.Popen(
        ["node", os.path.join(REPO, "bin", "floe.mjs"), "-c", os.path.join(run, "floe.yaml"), "catalog", "serve", "--port", str(rest_port)],
        stdout=serve_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=detach, env=env,
    )
    v = _versions()
    trino_log = open(os.path.join(run, "trino.log"), "w")
    cp = f"{HOME}/trino/classes:{HOME}/trino/lib/*"
    trino = subprocess.Popen(
        [
            f"{JAVA25}/bin/java",
            "-Xmx" + os.environ.get("FLOE_TRINO_HEAP", "2G"),
            "-XX:+ExitOnOutOfMemoryError",
            "-XX:-OmitStackTraceInFastThrow",
            "-XX:ReservedCodeCacheSize=256M",
            "-Djdk.attach.allowAttachSelf=true",
            "-XX:+EnableDynamicAgentLoading",
            # Trino 479+ refuses to start without the vector module
            "--add-modules=jdk.incubator.vector",
            "-Dlog.enable-color=false",
            f"-Dconfig={run}/etc/config.properties",
            "-cp", cp, "floe.engines.FloeTrinoServer", v.get("TRINO_VERSION", "unknown"),
        ],
        stdout=trino_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=detach, cwd=run,
    )
    state = {"trino_pid": trino.pid, "serve_pid": serve.pid, "trino_port": trino_port, "rest_port": rest_port, "warehouse": warehouse, "run": run}
    try:
        deadline = time.monotonic() + float(os.environ.get("FLOE_TRINO_START_TIMEOUT", "240"))
        while True:
            if trino.poll() is not None:
                raise SetupError(f"Trino exited with {trino.returncode} while starting; see {run}/trino.log:\n" + _tail(os.path.join(run, "trino.log")))
            if serve.poll() is not None:
                raise SetupError(f"floe catalog serve exited with {serve.returncode}; see {run}/serve.log:\n" + _tail(os.path.join(run, "serve.log")))
            try:
                status, info = _http("GET", f"http://127.0.0.1:{trino_port}/v1/info", timeout=5)
                if status == 200 and info and info.get("starting") is False:
                    code, _ = _http("GET", f"http://127.0.0.1:{rest_port}/v1/config", timeout=5)
                    if code == 200:
                        break
            except (urllib.error.URLError, ConnectionError, socket.timeout, OSError):
                pass
            if time.monotonic() > deadline:
                raise SetupError(f"Trino did not start within the timeout; see {run}/trino.log")
            time.sleep(1)
    except BaseException:
        _stop_state(state)
        raise
    with open(os.path.join(run, "state.json"), "w") as f:
        json.dump(state, f)
    return state


def _tail(path, n=15):
    try:
        with open(path) as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def _stop_pid(pid, grace=20):
    if not _alive(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.monotonic() + grace
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _stop_state(state):
    _stop_pid(state["trino_pid"])
    _stop_pid(state["serve_pid"])
    try:
        os.remove(os.path.join(state["run"], "state.json"))
    except OSError:
        pass


def running():
    """The state of the long-lived pair started by `engines/trino start`, when both still run."""
    try:
        with open(os.path.join(RUN, "state.json")) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return None
    if _alive(state["trino_pid"]) and _alive(state["serve_pid"]):
        return state
    return None


def start(warehouse):
    warehouse = os.path.abspath(warehouse)
    state = running()
    if state is not None:
        if state["warehouse"] != warehouse:
            raise SetupError(f"a Trino is already running over warehouse {state['warehouse']}; engines/trino stop first")
        return state
    return _start(RUN, warehouse, detach=True)


def stop():
    state = running()
    if state is None:
        try:
            with open(os.path.join(RUN, "state.json")) as f:
                state = json.load(f)
        except (OSError, ValueError):
            return False
    _stop_state(state)
    return True


def _query(state, sql, catalog="iceberg", schema=NAMESPACE):
    import trino

    conn = trino.dbapi.connect(host="127.0.0.1", port=state["trino_port"], user="floe", catalog=catalog, schema=schema)
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return cur.fetchall()
    finally:
        conn.close()


def _sq(text):
    return "'" + text.replace("'", "''") + "'"


def _dq(text):
    return '"' + text.replace('"', '""') + '"'


def catalog_properties(catalog):
    """The Trino Iceberg connector's properties for a REST or SQL catalog spec (catalogs.py)."""
    if catalog.get("configs"):
        from engine_configs import trino_properties

        # the catalog file as Trino would load it from etc/catalog/ (CREATE CATALOG names the connector)
        return {k: v for k, v in trino_properties(catalog["configs"], catalog["type"]).items() if k != "connector.name"}
    props = {}
    if catalog["type"] == "rest":
        props["iceberg.catalog.type"] = "rest"
        props["iceberg.rest-catalog.uri"] = catalog["uri"]
        if catalog.get("warehouse"):
            props["iceberg.rest-catalog.warehouse"] = catalog["warehouse"]
        if catalog.get("token"):
            props["iceberg.rest-catalog.security"] = "OAUTH2"
            props["iceberg.rest-catalog.oauth2.token"] = catalog["token"]
    else:
        p = sql_parts(catalog)
        props["iceberg.catalog.type"] = "jdbc"
        # the catalog name is data: Trino reads the rows whose catalog_name it is given
        props["iceberg.jdbc-catalog.catalog-name"] = catalog.get("name", "floe")
        props["iceberg.jdbc-catalog.driver-class"] = "org.postgresql.Driver"
        props["iceberg.jdbc-catalog.connection-url"] = jdbc_url(catalog)
        props["iceberg.jdbc-catalog.connection-user"] = p["user"]
        if p["password"]:
            props["iceberg.jdbc-catalog.connection-password"] = p["password"]
        props["iceberg.jdbc-catalog.schema-version"] = "V1"
        props["iceberg.jdbc-catalog.default-warehouse-dir"] = sql_warehouse(catalog)
    # floe writes file:///abs locations; the local file system resolves them under "/"
    props["fs.local.enabled"] = "true"
    props["local.location"] = "/"
    return props


def ensure_catalog(state, catalog):
    """The name of the Trino catalog for `catalog`, created on first use."""
    props = catalog_properties(catalog)
    name = "c_" + hashlib.sha1(json.dumps(props, sort_keys=True).encode()).hexdigest()[:12]
    known = {r[0] for r in _query(state, "SHOW CATALOGS", catalog="system", schema="information_schema")}
    if name not in known:
        with_clause = ", ".join(f"{_dq(k)} = {_sq(v)}" for k, v in props.items())
        import trino

        try:
            _query(state, f"CREATE CATALOG {name} USING iceberg WITH ({with_clause})", catalog="system", schema="information_schema")
        except trino.exceptions.TrinoQueryError as e:
            if "already exists" not in str(e.message):
                raise SetupError(f"Trino could not create a catalog for {catalog['type']} catalog: {e.error_name}: {e.message}") from e
    return name


def read(catalog, target):
    """Rows of the table as Trino reads it. Raises Refused for Trino's own errors."""
    import trino

    state = running()
    throwaway = None
    if state is None:
        if catalog["type"] == "filesystem":
            # the table's own directory as the warehouse: registration accepts nothing outside it
            warehouse = os.path.dirname(os.path.dirname(current_metadata_file(target)))
        else:
            warehouse = tempfile.gettempdir()
        throwaway = _start(tempfile.mkdtemp(prefix="floe-trino-"), warehouse, detach=False)
        state = throwaway
    try:
        if catalog["type"] != "filesystem":
            namespace, name = parse_identifier(target)
            trino_catalog = ensure_catalog(state, catalog)
            try:
                return [list(r) for r in _query(state, f"SELECT * FROM {_dq(trino_catalog)}.{_dq('.'.join(namespace))}.{_dq(name)}", catalog=trino_catalog, schema=".".join(namespace))]
            except trino.exceptions.TrinoQueryError as e:
                raise Refused(f"{e.error_name}: {e.message}") from e
        return _read_registered(state, current_metadata_file(target))
    finally:
        if throwaway is not None:
            _stop_state(throwaway)
            shutil.rmtree(throwaway["run"], ignore_errors=True)


def _read_registered(state, metadata_file):
    import trino

    rest = f"http://127.0.0.1:{state['rest_port']}/v1"
    name = "t_" + hashlib.sha1(f"{metadata_file}:{os.getpid()}:{time.time()}".encode()).hexdigest()[:16]
    try:
        code, body = _http("POST", f"{rest}/namespaces", {"namespace": [NAMESPACE], "properties": {}})
        if code not in (200, 409):
            raise SetupError(f"could not create namespace {NAMESPACE} in floe catalog serve: {code} {body}")
        location = "file://" + metadata_file
        code, body = _http("POST", f"{rest}/namespaces/{NAMESPACE}/register", {"name": name, "metadata-location": location})
        if code != 200:
            message = body.get("error", {}).get("message") if isinstance(body, dict) else body
            raise SetupError(f"floe catalog serve (warehouse {state['warehouse']}) did not register {location}: {code} {message}")
        try:
            rows = _query(state, f'SELECT * FROM iceberg.{NAMESPACE}."{name}"')
        except trino.exceptions.TrinoQueryError as e:
            raise Refused(f"{e.error_name}: {e.message}") from e
        return [list(r) for r in rows]
    finally:
        try:
            _http("DELETE", f"{rest}/namespaces/{NAMESPACE}/tables/{name}")
        except Exception:
            pass


def main(argv):
    if not argv or argv[0] not in ("start", "stop", "status"):
        sys.stderr.write(__doc__.split("Usage: ", 1)[1])
        return 2
    try:
        if argv[0] == "start":
            warehouse = argv[argv.index("--warehouse") + 1] if "--warehouse" in argv else tempfile.gettempdir()
            state = start(warehouse)
            print(f"engines/trino: Trino at http://127.0.0.1:{state['trino_port']}, floe catalog serve at http://127.0.0.1:{state['rest_port']} over {state['warehouse']} (run dir {state['run']})")
        elif argv[0] == "stop":
            print("engines/trino: stopped" if stop() else "engines/trino: not running")
        else:
            state = running()
            print(json.dumps(state) if state else "engines/trino: not running")
            return 0 if state else 1
    except SetupError as e:
        sys.stderr.write(f"engines/trino: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
