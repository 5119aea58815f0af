"""A small Streamable HTTP server for auth-agent's bridge tests: each path plays one
behaviour, well or badly. Prints its port on the first line of stdout, then serves until
stdin closes (the test runner holds the other end).

  /json     initialize → a result and Mcp-Session-Id "s-1"; other requests → a result that
            echoes the MCP headers received; notifications and responses → 202; GET → 405
  /sse      the same answers as SSE: a progress notification, then the result
            (params.delay seconds before answering, so answers can overtake each other)
  /5xx      503 to everything
  /gone     /json, but any request carrying a session id → 404
  /notjson  200 application/json whose body is not JSON
  /badsse   200 text/event-stream whose event data is not JSON
  /cut      an SSE stream with a notification that ends without the response
  /hang     answers nothing for 30 s
  /listen   /json, plus a GET stream: the first ends after event e1, the one resumed from e1
            (Last-Event-ID) sends e2 and stays open, a later one gets 405
  /resume   an SSE stream that ends after event r1 without the response; a GET with
            Last-Event-ID r1 gets the rest (the response)
  /401      401 with a Bearer challenge to everything (no provider covers it)
  /junk     an SSE answer with events that are no JSON-RPC message (42, "text", [1,2],
            {"unexpected":true}) around a progress notification and the response; with
            params.alone, only those events
  /junkjson an application/json batch of the same four and the response; with params.alone,
            the body {"unexpected":true}
  /count    every POST held 0.5 s, counting how many are in flight at once, requests apart
            from the rest; answers as /json does
  /_max     GET: the most /count POSTs in flight at once {"requests", "others"} and how many
            each saw in all
  /_log     GET: every request so far ({method, path, headers}) as a JSON array
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = []
RESUMABLE = []  # ids of requests whose answer /resume's GET gives
LOCK = threading.Lock()
JUNK = [42, "text", [1, 2], {"unexpected": True}]
COUNTS = {"requests": 0, "others": 0}
MAX = {"requests": 0, "others": 0, "requestsSeen": 0, "othersSeen": 0}
HEADERS = ["mcp-protocol-version", "mcp-session-id", "mcp-method", "mcp-name", "accept", "content-type",
           "authorization", "dpop", "last-event-id"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        with LOCK:
            LOG.append({"method": self.command, "path": self.path,
                        "headers": {h: self.headers[h] for h in HEADERS if self.headers[h] is not None}})

    def send(self, status, body=b"", content_type="application/json", extra=None):
        self.send_response(status)
        if body:
            self.send_header("Content-Type", content_type)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/_log":
            with LOCK:
                body = json.dumps(LOG).encode()
            return self.send(200, body)
        if self.path == "/_max":
            with LOCK:
                body = json.dumps(MAX).encode()
            return self.send(200, body)
        self.record()
        if self.path == "/resume" and self.headers["last-event-id"] == "r1":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            answer = {"jsonrpc": "2.0", "id": RESUMABLE[-1], "result": {"resumed": True}}
            self.wfile.write(f"id: r2\ndata: {json.dumps(answer)}\n\n".encode())
            return
        if self.path != "/listen" or self.headers["last-event-id"] == "e2":
            return self.send(405)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        n = 2 if self.headers["last-event-id"] == "e1" else 1
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": n}}
        self.wfile.write(f"retry: 100\nid: e{n}\ndata: {json.dumps(note)}\n\n".encode())
        self.wfile.flush()
        if n == 2:
            time.sleep(30)

    def do_DELETE(self):
        self.record()
        self.send(200)

    def do_POST(self):
        self.record()
        length = int(self.headers.get("Content-Length", "0"))
        message = json.loads(self.rfile.read(length) or b"null")
        path = self.path.split("?")[0]
        if path == "/5xx":
            return self.send(503, b"busy", "text/plain")
        if path == "/401":
            return self.send(401, b"", extra={"WWW-Authenticate": 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'})
        if path == "/count":
            kind = "requests" if isinstance(message, dict) and "method" in message and "id" in message else "others"
            with LOCK:
                COUNTS[kind] += 1
                MAX[kind] = max(MAX[kind], COUNTS[kind])
                MAX[kind + "Seen"] += 1
            time.sleep(0.5)
            with LOCK:
                COUNTS[kind] -= 1
            if kind == "others":
                return self.send(202)
            return self.send(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode())
        if path == "/hang":
            time.sleep(30)
            return self.send(503)
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return self.send(202)
        if path == "/gone" and self.headers["mcp-session-id"]:
            return self.send(404, b"no such session", "text/plain")
        if path == "/notjson":
            return self.send(200, b"<html>not json</html>")
        seen = {h: self.headers[h] for h in HEADERS if self.headers[h] is not None and h not in ("authorization", "dpop")}
        if message["method"] == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "fault", "version": "1"}}
            extra = {"Mcp-Session-Id": "s-1"}
        else:
            result = {"method": message["method"], "headers": seen}
            extra = {}
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        alone = bool((message.get("params") or {}).get("alone"))
        if path == "/junkjson":
            body = {"unexpected": True} if alone else JUNK + [answer]
            return self.send(200, json.dumps(body).encode())
        if path in ("/json", "/gone", "/listen"):
            return self.send(200, json.dumps(answer).encode(), extra=extra)
        # Event streams: written as they happen, the connection closed at the end.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
        if path == "/junk":
            events = JUNK[:2] + ([] if alone else [progress]) + JUNK[2:] + ([] if alone else [answer])
            for event in events:
                self.wfile.write(b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n")
                self.wfile.flush()
            return
        if path == "/badsse":
            self.wfile.write(b"event: message\ndata: {not json\n\n")
            return
        self.wfile.write(b"id: 1\r\nevent: message\r\ndata: " + json.dumps(progress).encode() + b"\r\n\r\n")
        self.wfile.flush()
        if path == "/cut":
            return
        if path == "/resume":
            RESUMABLE.append(message["id"])
            self.wfile.write(b"id: r1\ndata: " + json.dumps(progress).encode() + b"\n\n")
            return
        time.sleep(float((message.get("params") or {}).get("delay", 0)))
        # Split across writes, a multi-line data field, and a comment, as real servers do.
        body = json.dumps(answer, indent=1).encode()
        self.wfile.write(b": keep-alive\n\nid: 2\nevent: message\n")
        self.wfile.flush()
        for line in body.split(b"\n"):
            self.wfile.write(b"data: " + line + b"\n")
        self.wfile.write(b"\n")


def main():
    ThreadingHTTPServer.request_queue_size = 512  # /count's hundreds of connections at once
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()


main()
