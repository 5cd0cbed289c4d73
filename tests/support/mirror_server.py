"""A mirror of the upstream hosts for the fetch tests: a static HTTP server on 127.0.0.1, a process of
its own that the test starts and stops by its pid (`python mirror_server.py <folder> <request log>`).

It serves `<folder>` (laid out as `github/<repository>/<commit>/<path>` and `pypi/<path>`), prints
its port on its first line, and appends every requested path to the request log. A file
`<served file>.fault` beside a served file makes that file fail, as a real host can:

- `404` or `500`: that HTTP status and no body;
- `truncate`: status 200 and the whole file's Content-Length, then half the body and a closed
  connection.
"""

from __future__ import annotations

import http.server
import signal
import sys
from functools import partial
from pathlib import Path


class MirrorHandler(http.server.SimpleHTTPRequestHandler):
    request_log: Path

    def log_message(self, *args) -> None:  # the request log says what was asked
        pass

    def do_GET(self) -> None:
        with open(self.request_log, "a", encoding="utf-8") as log:
            log.write(self.path + "\n")
        served = Path(self.translate_path(self.path))
        fault = served.with_name(served.name + ".fault")
        if served.is_file() and fault.is_file():
            kind = fault.read_text().strip()
            if kind in ("404", "500"):
                self.send_error(int(kind))
                return
            if kind == "truncate":
                body = served.read_bytes()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
        super().do_GET()


def main(folder: str, request_log: str) -> None:
    # A child inherits an ignored or blocked SIGTERM from the process that starts it, and the test
    # stops this server by SIGTERM: in several CI runs every mirror one pytest worker started outlived
    # it, each stop waiting 10 s before its SIGKILL (upstream_mirror.Mirror.stop). The server holds
    # nothing to flush, so SIGTERM ends it whatever it inherited.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    MirrorHandler.request_log = Path(request_log)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(MirrorHandler, directory=folder))
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(*sys.argv[1:3])
