#!/usr/bin/python3
"""Stands in for JupyterLab's token check on a node's localhost: /api/status answers 200 with
"Authorization: token T" (T read from the cluster's state file at each request), /lab answers 200
with ?token=T in the URL (what a browser opens), everything else 403.
Usage: fake_jupyter.py PORT STATE_JSON"""
import http.server
import json
import sys
import urllib.parse

port, state = int(sys.argv[1]), sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        token = json.load(open(state)).get("jupyter_token", "")
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query).get("token", [""])[0]
        if url.path.startswith("/api/status"):
            ok = bool(token) and self.headers.get("Authorization") == "token " + token
        else:
            ok = bool(token) and url.path == "/lab" and query == token
        self.send_response(200 if ok else 403)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"started": "now"}' if ok else b'{"message": "Forbidden"}')

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
