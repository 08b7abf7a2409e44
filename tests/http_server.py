"""A test HTTP server on 127.0.0.1 with misbehaviours on demand (for tests/test_fetch.py, test_download.py).

``server.files[name] = bytes`` serves a file (Range honoured unless ``server.ranges`` is off);
``server.behaviours[name] = (kind, arg)`` misbehaves instead:

- ``("endless", None)``: 200, no length, zeros until the client hangs up;
- ``("trickle", seconds)``: 200, a length of 10,000, then one byte every ``seconds``;
- ``("steady", seconds)``: 200, no length, 1,000 bytes every ``seconds``, forever;
- ``("redirect", url)``: 302 to ``url``;
- ``("range_from_zero", bytes)``: answers a Range with 206 but from byte 0, the whole body.

Every loop waits on ``server.stop``, so the fixture's teardown ends them at once; a handler
never runs more than ``MAX_SECONDS``.
"""
from __future__ import annotations

import http.server
import threading
import time

MAX_SECONDS = 20


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        name = self.path.lstrip("/")
        self.server.requests.append((self.path, self.headers.get("Range")))
        behaviour = self.server.behaviours.get(name)
        try:
            if behaviour is not None:
                getattr(self, f"_{behaviour[0]}")(behaviour[1])
            else:
                self._serve(self.server.files.get(name))
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def _serve(self, data):
        if data is None:
            self.send_error(404)
            return
        start = 0
        wanted = self.headers.get("Range")
        if wanted and self.server.ranges:
            start = int(wanted.split("=")[1].split("-")[0])
            if start >= len(data):
                self.send_error(416)
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.server.cut is not None:
            body, self.server.cut = body[:self.server.cut], None
        self.wfile.write(body)
        self.wfile.flush()

    def _range_from_zero(self, data):
        self.send_response(206 if self.headers.get("Range") else 200)
        if self.headers.get("Range"):
            self.send_header("Content-Range", f"bytes 0-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _redirect(self, url):
        self.send_response(302)
        self.send_header("Location", url)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _endless(self, _):
        self.send_response(200)
        self.end_headers()
        self._pour(b"\0" * 65536, 0.0)

    def _steady(self, seconds):
        self.send_response(200)
        self.end_headers()
        self._pour(b"x" * 1000, seconds)

    def _trickle(self, seconds):
        self.send_response(200)
        self.send_header("Content-Length", "10000")
        self.end_headers()
        self._pour(b"x", seconds)

    def _pour(self, block: bytes, pause: float):
        ends = time.monotonic() + MAX_SECONDS
        while not self.server.stop.is_set() and time.monotonic() < ends:
            self.wfile.write(block)
            self.wfile.flush()
            self.server.sent += len(block)
            if pause:
                self.server.stop.wait(pause)

    def log_message(self, *args):
        pass


def start() -> http.server.ThreadingHTTPServer:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.files, httpd.behaviours, httpd.requests = {}, {}, []
    httpd.ranges, httpd.cut, httpd.sent = True, None, 0
    httpd.stop = threading.Event()
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return httpd


def stop(httpd) -> None:
    httpd.stop.set()
    httpd.shutdown()
    httpd.server_close()


def url(httpd, name: str, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{httpd.server_port}/{name}"
