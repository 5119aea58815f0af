"""A loopback git HTTP server for the command-line tests: serves the repositories under
GIT_PROJECT_ROOT through `git http-backend` (CGI), and only to requests whose Basic-auth
password is an access token the dev issuer accepts (checked at its /userinfo each time,
so a revoked token is refused at once) — and appends the token's user (its `sub`) to
ROOT/users.log, one line per request served. Prints {"port": N} and serves until stdin closes."""
import base64
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, ISSUER = sys.argv[1], sys.argv[2]


def token_user(token):
    """The `sub` of the user the token belongs to, or None when the issuer refuses it."""
    request = urllib.request.Request(ISSUER + "/userinfo", headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response).get("sub") if response.status == 200 else None
    except urllib.error.HTTPError:
        return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def refuse(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def serve(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return self.refuse()
        _, _, password = base64.b64decode(header[6:]).decode().partition(":")
        user = token_user(password)
        if user is None:
            return self.refuse()
        with open(os.path.join(ROOT, "users.log"), "a") as log:
            log.write(user + "\n")
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": ROOT, "GIT_HTTP_EXPORT_ALL": "1",
               "REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
               "REMOTE_USER": "oauth2", "REMOTE_ADDR": "127.0.0.1", "GATEWAY_INTERFACE": "CGI/1.1"}
        for name in ("Content-Encoding", "Git-Protocol"):
            if self.headers.get(name):
                env["HTTP_" + name.upper().replace("-", "_")] = self.headers[name]
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=30).stdout
        head, _, content = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    do_GET = serve
    do_POST = serve


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(json.dumps({"port": server.server_address[1]}), flush=True)
sys.stdin.read()
server.shutdown()
