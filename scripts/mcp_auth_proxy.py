"""A loopback HTTP proxy that adds `Authorization: Bearer $TOKEN` and forwards everything else
(method, path, body, Host, Origin, MCP headers) unchanged to `braid serve`. The official MCP
conformance suite has no way to send a bearer token; this lets it test a server that requires
one. Usage: mcp_auth_proxy.py LISTEN_PORT UPSTREAM_PORT (token in $TOKEN)."""

import http.client
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LISTEN, UPSTREAM, TOKEN = int(sys.argv[1]), int(sys.argv[2]), os.environ["TOKEN"]


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("authorization", "connection")}
        headers["Authorization"] = f"Bearer {TOKEN}"
        upstream = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=60)
        upstream.request(self.command, self.path, body=body, headers=headers)
        reply = upstream.getresponse()
        data = reply.read()
        self.send_response(reply.status)
        for k, v in reply.getheaders():
            if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        upstream.close()

    do_GET = do_POST = do_DELETE = do_PUT = forward

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that drops its connection (as the suite's clients do) is not an error here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


Server(("127.0.0.1", LISTEN), Proxy).serve_forever()
