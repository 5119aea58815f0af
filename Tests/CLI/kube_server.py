"""A loopback fake Kubernetes API server over https for the command-line tests (kubectl runs
exec credential plugins only for https servers): answers /version to requests whose bearer
token the dev issuer accepts at its /userinfo, 401 otherwise. Arguments: certificate, key,
issuer URL. Prints {"port": N} and serves until stdin closes."""
import json
import ssl
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, ISSUER = sys.argv[1], sys.argv[2], sys.argv[3]


def token_accepted(token):
    request = urllib.request.Request(ISSUER + "/userinfo", headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status == 200
    except urllib.error.HTTPError:
        return False


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Bearer ") or not token_accepted(header[7:]):
            return self.answer(401, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Unauthorized", "code": 401})
        self.answer(200, {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fake", "platform": "linux/amd64"})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(json.dumps({"port": server.server_address[1]}), flush=True)
sys.stdin.read()
server.shutdown()
