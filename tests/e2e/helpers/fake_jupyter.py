#!/usr/bin/python3
"""Stands in for JupyterLab's token check on a node's localhost: /api/status answers 200 with
"Authorization: token T" (T read from the cluster's state file at each request), 403 otherwise.
Usage: fake_jupyter.py PORT STATE_JSON"""
import http.server
import json
import sys

port, state = int(sys.argv[1]), sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        token = json.load(open(state)).get("jupyter_token", "")
        ok = bool(token) and self.headers.get("Authorization") == "token " + token
        self.send_response(200 if ok and self.path.startswith("/api/status") else 403)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"started": "now"}' if ok else b'{"message": "Forbidden"}')

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
