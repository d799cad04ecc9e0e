"""The engines server: one long-lived process that engines/read hands its reads to.

Spark (a SparkSession with its JVM) and Iceberg's Java reader take seconds to start, far longer than
reading a small table; a test suite that reads dozens of tables through each engine and catalog
starts one server (`engines/server start`), and every `engines/read` while it runs is answered by it
— same readers, same output, same exit codes. It also runs Spark SQL and Iceberg's Spark actions on
a table for the suite's maintenance test (POST /spark/sql, /spark/delete-orphan-files).

Usage: engines/server start [--warm spark,iceberg-java] | stop | status

Requests are JSON over HTTP on 127.0.0.1 (the port is in $FLOE_ENGINES_SERVER_RUN/state.json, default
$FLOE_ENGINES_HOME/run/server):
  POST /read {"engine", "catalog", "table"} → {"status": "ok", "metadata", "lines"} |
       {"status": "refused" | "setup" | "unsupported" | "error", "message"}
  POST /spark/sql {"catalog", "table", "statements"} → {"status": "ok", "results": [{statement, rows | error}]}
  POST /spark/delete-orphan-files {"catalog", "table", "olderThanMs"} → {"status": "ok", "deleted": [...]}
  GET /health, POST /shutdown
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from engine_errors import Refused, SetupError  # noqa: E402
from readers import Engines, Unsupported, read_lines  # noqa: E402

HOME = os.environ.get("FLOE_ENGINES_HOME") or os.path.expanduser("~/.cache/floe-engines")
RUN = os.environ.get("FLOE_ENGINES_SERVER_RUN") or os.path.join(HOME, "run", "server")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def call(state, path, body=None, timeout=1800):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{state['port']}{path}", data=data, method="POST" if data is not None else "GET", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


def running():
    """The running server's state, or None."""
    try:
        with open(os.path.join(RUN, "state.json")) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return None
    return state if _alive(state["pid"]) else None


def outcome(fn):
    try:
        return {"status": "ok", **fn()}
    except Refused as e:
        return {"status": "refused", "message": str(e)}
    except SetupError as e:
        return {"status": "setup", "message": str(e)}
    except (Unsupported, ValueError) as e:
        return {"status": "unsupported", "message": str(e)}
    except Exception:
        return {"status": "error", "message": traceback.format_exc()}


class Handler(BaseHTTPRequestHandler):
    engines = None
    server_ref = None

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (time.strftime("%H:%M:%S"), fmt % args))

    def _send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, {"status": "ok", "pid": os.getpid()})
        self._send(404, {"status": "error", "message": f"no such endpoint {self.path}"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length).decode() or "{}")
        e = self.engines
        if self.path == "/read":
            def go():
                metadata, lines = read_lines(e, body["engine"], body["catalog"], body["table"])
                return {"metadata": metadata, "lines": lines}
            return self._send(200, outcome(go))
        if self.path == "/spark/sql":
            return self._send(200, outcome(lambda: {"results": e.spark().sql(body["catalog"], body["table"], body["statements"])}))
        if self.path == "/spark/delete-orphan-files":
            return self._send(200, outcome(lambda: {"deleted": e.spark().delete_orphan_files(body["catalog"], body["table"], body["olderThanMs"])}))
        if self.path == "/shutdown":
            self._send(200, {"status": "ok"})
            threading.Thread(target=self.server_ref.shutdown, daemon=True).start()
            return None
        self._send(404, {"status": "error", "message": f"no such endpoint {self.path}"})


def serve(port, warm):
    engines = Engines(persistent=True)
    Handler.engines = engines
    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    Handler.server_ref = httpd
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=httpd.shutdown, daemon=True).start())
    for w in warm:
        if w == "spark":
            engines.spark()
    sys.stderr.write(f"engines server on 127.0.0.1:{port} (pid {os.getpid()})\n")
    sys.stderr.flush()
    try:
        httpd.serve_forever()
    finally:
        engines.close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(warm):
    state = running()
    if state is not None:
        return state
    os.makedirs(RUN, exist_ok=True)
    port = _free_port()
    log = open(os.path.join(RUN, "server.log"), "w")
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "serve", str(port), ",".join(warm)], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env={**os.environ, "TZ": "UTC"})
    state = {"pid": proc.pid, "port": port, "run": RUN}
    deadline = time.monotonic() + float(os.environ.get("FLOE_ENGINES_SERVER_START_TIMEOUT", "300"))
    while True:
        if proc.poll() is not None:
            raise SetupError(f"the engines server exited with {proc.returncode} while starting; see {RUN}/server.log")
        try:
            if call(state, "/health", timeout=5)["status"] == "ok":
                break
        except (urllib.error.URLError, ConnectionError, socket.timeout, OSError):
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise SetupError(f"the engines server did not start in time; see {RUN}/server.log")
        time.sleep(0.5)
    with open(os.path.join(RUN, "state.json"), "w") as f:
        json.dump(state, f)
    return state


def stop():
    state = running()
    if state is None:
        return False
    try:
        call(state, "/shutdown", {}, timeout=10)
    except Exception:
        pass
    deadline = time.monotonic() + 30
    while _alive(state["pid"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(state["pid"]):
        os.kill(state["pid"], signal.SIGKILL)
    try:
        os.remove(os.path.join(RUN, "state.json"))
    except OSError:
        pass
    return True


def main(argv):
    if argv and argv[0] == "serve":
        os.environ["TZ"] = "UTC"
        time.tzset()
        serve(int(argv[1]), [w for w in (argv[2] if len(argv) > 2 else "").split(",") if w])
        return 0
    if not argv or argv[0] not in ("start", "stop", "status"):
        sys.stderr.write(__doc__.split("Usage: ", 1)[1].split("\n\n")[0] + "\n")
        return 2
    try:
        if argv[0] == "start":
            warm = argv[argv.index("--warm") + 1].split(",") if "--warm" in argv else []
            state = start(warm)
            print(f"engines/server: running at http://127.0.0.1:{state['port']} (pid {state['pid']}, run dir {RUN})")
        elif argv[0] == "stop":
            print("engines/server: stopped" if stop() else "engines/server: not running")
        else:
            state = running()
            print(json.dumps(state) if state else "engines/server: not running")
            return 0 if state else 1
    except SetupError as e:
        sys.stderr.write(f"engines/server: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
