"""How the master's idle clock ends an AWS cluster (src/runtime/tools/ddl_idle_aws.py): its SigV4 signer
against AWS's published example (IAM User Guide, "Create a signed AWS API request": GET ListUsers,
signature 5d672d79...b5d7), and end() against a local instance-metadata server (IMDSv2: no token, 401) and a
local EC2 endpoint that checks every signature with the AWS stand-in's own verifier (tests/fakes/aws_sigv4.py)."""
import datetime
import http.server
import json
import os
import sys
import threading
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "src", "runtime", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "fakes"))
import ddl_idle_aws  # noqa: E402
import aws_sigv4  # noqa: E402  (the stand-in's verifier)

KEY, SECRET, TOKEN = "ASIATESTTEST00000001", "test/secret+key", "session-token-1"


class Signer(unittest.TestCase):
    def test_published_example(self):
        h = ddl_idle_aws.sign("GET", "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
                              {"content-type": "application/x-www-form-urlencoded; charset=utf-8"}, b"",
                              "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "", "us-east-1", "iam",
                              "20150830T123600Z")
        self.assertEqual(h["authorization"],
                         "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
                         "SignedHeaders=content-type;host;x-amz-date, "
                         "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")
        self.assertNotIn("x-amz-security-token", h)

    def test_query_is_canonical(self):
        self.assertEqual(ddl_idle_aws.canonical_query("Version=2016-11-15&Action=X&a=b%20c"),
                         "Action=X&Version=2016-11-15&a=b%20c")


class Servers:
    """An IMDSv2 server (token required) and an EC2 endpoint that verifies SigV4 and records the actions."""

    def __init__(self, refuse=None):
        self.calls, self.refuse = [], refuse or {}
        outer = self

        class Imds(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def reply(self, status, text):
                body = text.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_PUT(self):
                ok = self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
                self.reply(200 if ok else 400, "imds-token" if ok else "")

            def do_GET(self):
                if self.headers.get("X-aws-ec2-metadata-token") != "imds-token":
                    return self.reply(401, "")
                if self.path == "/latest/meta-data/iam/security-credentials/":
                    return self.reply(200, "demo-master")
                if self.path == "/latest/meta-data/iam/security-credentials/demo-master":
                    return self.reply(200, json.dumps({"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": KEY,
                                                       "SecretAccessKey": SECRET, "Token": TOKEN,
                                                       "Expiration": "2030-01-01T00:00:00Z"}))
                self.reply(404, "")

        class Ec2(Imds):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {k.lower(): [v] for k, v in self.headers.items()}
                cfg = {"region": "us-east-1", "credentials": {KEY: {"secret": SECRET, "session_token": TOKEN}}}
                try:
                    aws_sigv4.authenticate(cfg, "ec2", "POST", self.path, "", headers, body,
                                           datetime.datetime.now(datetime.timezone.utc))
                except aws_sigv4.ApiError as e:
                    return self.reply(e.status, "<Response><Errors><Error><Code>%s</Code></Error></Errors></Response>" % e.code)
                params = urllib.parse.parse_qsl(body.decode())
                outer.calls.append(params)
                action = dict(params)["Action"]
                if action in outer.refuse:
                    return self.reply(403, "<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are "
                                      "not authorized to perform this operation.</Message></Error></Errors></Response>")
                self.reply(200, "<%sResponse/>" % action)

        self.imds = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Imds)
        self.ec2 = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ec2)
        for s in (self.imds, self.ec2):
            threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.env = {"AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:%d" % self.imds.server_port,
                    "AWS_ENDPOINT_URL_EC2": "http://127.0.0.1:%d" % self.ec2.server_port, "AWS_REGION": "us-east-1",
                    "DDL_CLOUD_SERVERS": "i-w1,i-w2,i-m"}

    def close(self):
        for s in (self.imds, self.ec2):
            s.shutdown()
            s.server_close()


class End(unittest.TestCase):
    def test_tags_the_master_then_stops_workers_then_master(self):
        s = Servers()
        try:
            how = ddl_idle_aws.end(s.env, "stop", "x" * 300)
        finally:
            s.close()
        self.assertEqual([dict(c)["Action"] for c in s.calls], ["CreateTags", "StopInstances", "StopInstances"])
        self.assertEqual(dict(s.calls[0]), {"Action": "CreateTags", "Version": "2016-11-15", "ResourceId.1": "i-m",
                                            "Tag.1.Key": "ddl-autostop", "Tag.1.Value": "x" * 256})
        self.assertEqual([(n, v) for n, v in s.calls[1] if n.startswith("InstanceId")],
                         [("InstanceId.1", "i-w1"), ("InstanceId.2", "i-w2")])
        self.assertEqual([(n, v) for n, v in s.calls[2] if n.startswith("InstanceId")], [("InstanceId.1", "i-m")])
        self.assertIn("StopInstances i-w1,i-w2,i-m", how)
        self.assertIn("demo-master", how)

    def test_destroy_terminates(self):
        s = Servers()
        try:
            ddl_idle_aws.end(dict(s.env, DDL_CLOUD_SERVERS="i-m"), "destroy", "why")
        finally:
            s.close()
        self.assertEqual([dict(c)["Action"] for c in s.calls], ["CreateTags", "TerminateInstances"])

    def test_refusal_names_ec2s_code(self):
        s = Servers(refuse={"TerminateInstances"})
        try:
            with self.assertRaisesRegex(RuntimeError, "TerminateInstances: UnauthorizedOperation: You are not authorized"):
                ddl_idle_aws.end(s.env, "destroy", "why")
        finally:
            s.close()
        # The line is taken back (an empty value; parse_qsl drops blank values, EC2 takes a missing one as
        # empty): a later stop by someone else must not read as the clock's end.
        tags = [dict(c).get("Tag.1.Value", "") for c in s.calls if dict(c)["Action"] == "CreateTags"]
        self.assertEqual(tags, ["why", ""])

    def test_no_imds_token_is_401(self):
        s = Servers()
        try:
            with self.assertRaisesRegex(RuntimeError, "HTTP 401"):
                ddl_idle_aws._imds(s.env["AWS_EC2_METADATA_SERVICE_ENDPOINT"], "GET",
                                   "/latest/meta-data/iam/security-credentials/", {})
        finally:
            s.close()

    def test_bad_input(self):
        with self.assertRaisesRegex(RuntimeError, "names no instance"):
            ddl_idle_aws.end({"AWS_REGION": "us-east-1"}, "stop", "why")
        with self.assertRaisesRegex(RuntimeError, "unknown autostop action"):
            ddl_idle_aws.end({}, "pause", "why")


if __name__ == "__main__":
    unittest.main()
