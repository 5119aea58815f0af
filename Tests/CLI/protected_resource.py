"""A loopback protected resource (RFC 9728) in front of a real authorization server, for learning
tests: `BASE/api` is the resource, its metadata at `/.well-known/oauth-protected-resource/api` names
ISSUER as its authorization server and SCOPES (space-separated, may be empty) as its scopes. Every
other request gets 401 with `resource_metadata`. Prints {"port": N} and serves until stdin closes.

    protected_resource.py ISSUER [SCOPES]"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ISSUER = sys.argv[1]
SCOPES = (sys.argv[2] if len(sys.argv) > 2 else "").split()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        base = "http://127.0.0.1:%d" % self.server.server_address[1]
        if self.path == "/.well-known/oauth-protected-resource/api":
            body = json.dumps({"resource": base + "/api", "authorization_servers": [ISSUER],
                               "scopes_supported": SCOPES}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
        else:
            body = b""
            self.send_response(401)
            self.send_header("WWW-Authenticate",
                             'Bearer resource_metadata="%s/.well-known/oauth-protected-resource/api"' % base)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(json.dumps({"port": server.server_address[1]}), flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
