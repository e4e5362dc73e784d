#!/usr/bin/env python3
"""The instance metadata service of one simulated EC2 instance (python3 stdlib only), run by the AWS stand-ins
inside the instance's node (its network namespace) on 169.254.169.254:80, where the instance's own programs
find it; it ends with the node's processes.

  aws_imds.py --registry REGION.json --instance-id i-...

Follows the Amazon EC2 User Guide:
  - "Use the Instance Metadata Service to access instance metadata", section "Use IMDSv2"
    (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-instance-metadata-service.html): a session
    token from PUT /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds (1-21600; missing or out of
    range: 400), refused (403) with X-Forwarded-For; every GET carries it in X-aws-ec2-metadata-token, and
    with the instance's http_tokens "required" a GET without a valid token is 401.
  - "Retrieve security credentials from instance metadata"
    (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instance-metadata-security-credentials.html):
    GET /latest/meta-data/iam/security-credentials/ lists the instance profile's role; .../<role> is JSON
    {"Code": "Success", "LastUpdated", "Type": "AWS-HMAC", "AccessKeyId", "SecretAccessKey", "Token",
    "Expiration"}; without a profile (or another name) 404.
  - "Instance metadata categories": instance-id.
The credentials are those the stand-ins issued for the instance (tests/fakes/aws_iam.py), read from the
simulated region at every request.
"""
import argparse
import http.server
import json
import os
import secrets
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import openstack_registry  # noqa: E402  (the region's locking)

TOKENS = {}
PREFIX = "/latest/meta-data/iam/security-credentials/"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "EC2ws"
    sys_version = ""

    def log_message(self, *args):
        pass

    def reply(self, status, text, content_type="text/plain"):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        if self.path != "/latest/api/token":
            return self.reply(404, "")
        if self.headers.get("X-Forwarded-For"):
            return self.reply(403, "")
        try:
            ttl = int(self.headers.get("X-aws-ec2-metadata-token-ttl-seconds", ""))
        except ValueError:
            ttl = 0
        if not 1 <= ttl <= 21600:
            return self.reply(400, "")
        token = secrets.token_urlsafe(40)
        TOKENS[token] = time.time() + ttl
        self.reply(200, token)

    def do_GET(self):
        token = self.headers.get("X-aws-ec2-metadata-token", "")
        if TOKENS.get(token, 0) < time.time():
            return self.reply(401, "")
        with openstack_registry.registry(self.server.registry, kinds=("instances", "instance_credentials")) as reg:
            cred = next((c for c in reg["instance_credentials"] if c["instanceId"] == self.server.instance_id), None)
        if self.path == "/latest/meta-data/instance-id":
            return self.reply(200, self.server.instance_id)
        if self.path == PREFIX:
            return self.reply(200, cred["role"]) if cred else self.reply(404, "")
        if cred and self.path == PREFIX + cred["role"]:
            return self.reply(200, json.dumps({
                "Code": "Success", "LastUpdated": cred["LastUpdated"], "Type": "AWS-HMAC",
                "AccessKeyId": cred["AccessKeyId"], "SecretAccessKey": cred["_secret"], "Token": cred["_token"],
                "Expiration": cred["Expiration"]}, indent=2), "application/json")
        self.reply(404, "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--registry", required=True)
    ap.add_argument("--instance-id", required=True)
    ap.add_argument("--address", default="169.254.169.254")
    ap.add_argument("--port", type=int, default=80)
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer((a.address, a.port), Handler)
    srv.daemon_threads = True
    srv.registry, srv.instance_id = a.registry, a.instance_id
    srv.serve_forever()


if __name__ == "__main__":
    main()
