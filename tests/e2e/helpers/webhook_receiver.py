#!/usr/bin/python3
"""A chat-webhook stand-in on loopback: appends every POSTed body (one JSON per line) to a file.
Usage: webhook_receiver.py PORT OUTFILE"""
import http.server
import sys

port, out = int(sys.argv[1]), sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(out, "ab") as f:
            f.write(body + b"\n")
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
