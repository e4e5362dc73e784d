#!/usr/bin/env python3
"""HTTPS stand-in for the AWS APIs ddl calls: EC2, Service Quotas and IAM (python3 stdlib only).

  aws_api.py --cert server.pem --key server.key --config aws.json --port-file PORT
  aws_api.py --self-test        checks the signer against AWS's published example, then exits

Documents it follows:
  - Signature Version 4 (tests/fakes/aws_sigv4.py), the EC2 Query API (tests/fakes/aws_ec2.py), its
    simulated region (tests/fakes/aws_region.py) and the IAM Query API over it (tests/fakes/aws_iam_query.py):
    the documents each follows open those files.
  - Service Quotas API Reference, GetServiceQuota,
    https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_GetServiceQuota.html; protocol from
    botocore's model service-quotas/2019-06-24 (JSON 1.1, X-Amz-Target ServiceQuotasV20190624.<Operation>).
  - "Common Errors" shared by the AWS API references (UnrecognizedClientException 403, ExpiredTokenException 403,
    UnknownOperationException 404, RequestExpired 400), e.g.
    https://docs.aws.amazon.com/awsconsolehelpdocs/latest/gsg/common-errors.html
Where these are silent, the status or wording observed from the real services in public reports is used
(docs/research/aws-research.md lists them): GetServiceQuota's NoSuchResourceException for an unknown service
("The request failed because the specified service does not exist.") and, with an empty message, for a
quota with no applied value.

One port serves both services; which one a request is for is the service of its credential scope
(Credential=KEY/DATE/REGION/SERVICE/aws4_request), as each real endpoint accepts only its own.

Config (read again for every request, so a test can change it between calls):
  {"region": "us-east-1", "account_id": "123456789012",
   "credentials": {"AKIDEXAMPLE": {"secret": "...", "session_token": "..." (temporary keys only),
                                   "expired": false}},
   "instance_types": {"g5.xlarge": {"vcpus": 4, "cores": 2, "threads_per_core": 2, "memory_mib": 16384,
                      "gpus": {"count": 1, "name": "A10G", "manufacturer": "NVIDIA", "memory_mib": 24576},
                      "architectures": ["x86_64"], "zones": ["us-east-1a"], "offered": true, "spot": true,
                      "placement_strategies": ["cluster", "partition", "spread"], "efa": false}},
   "images": {"ami-0123456789abcdef0": {"name": "...", "owner_id": "898082745236", "owner_alias": "amazon",
              "architecture": "x86_64", "state": "available", "root_gb": 75, "public": true,
              "creation_date": "2025-01-01T00:00:00.000Z"}},
   "quotas": {"ec2": {"L-DB2E81BA": {"value": 8, "name": "Running On-Demand G and VT instances",
              "usage_class": "G/OnDemand"}}},
   "clock_offset_seconds": 0,                        # the stand-in's clock runs this far ahead (skew tests)
   "fail": {"DescribeImages": 503 or {"status": 503, "code": "Unavailable", "message": "..."}},
   "delay": {"GetServiceQuota": 2.5}}
The simulated region: --resources FILE (default $FAKE_AWS_RESOURCES; unset: none, and only the actions
above are served); its format is in tests/fakes/aws_region.py. The temporary credentials EC2 gave its instances
with an instance profile (tests/fakes/aws_iam.py) are accepted too, and a request signed with them is refused
(UnauthorizedOperation) unless the profile's role's policy allows it. --listen 0.0.0.0 serves the nodes too.
Every request is appended to <config>.requests as one JSON line (service, operation, method, path, header
names, parameter names, signed headers, status, error code, and on a signature mismatch the canonical request
and string to sign the stand-in expected); never a secret, a token or a signature.
"""
import argparse
import datetime
import http.server
import json
import os
import re
import ssl
import sys
import threading
import time
import urllib.parse
import uuid

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from aws_ec2 import ec2_error_body, ec2_response_body  # noqa: E402
from aws_iam_query import iam_dispatch, iam_error_body, iam_response_body  # noqa: E402
from aws_region import ec2_dispatch, registry  # noqa: E402
from aws_sigv4 import ApiError, authenticate, scope_service, self_test  # noqa: E402

SQ_TARGET_PREFIX = "ServiceQuotasV20190624."
LOCK = threading.Lock()


# ---- Service Quotas (JSON 1.1) -------------------------------------------------------------------------

SERVICE_CODE_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9-]{1,63}$")
QUOTA_CODE_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9-]{1,128}$")
SERVICE_NAMES = {"ec2": "Amazon Elastic Compute Cloud (Amazon EC2)"}


def get_service_quota(cfg, body):
    try:
        req = json.loads(body or b"{}")
    except ValueError:
        raise ApiError(400, "SerializationException", "Start of structure or map found where not expected (stand-in wording).")
    if not isinstance(req, dict):
        raise ApiError(400, "SerializationException", "The request body is not a JSON object (stand-in wording).")
    unknown = sorted(set(req) - {"ServiceCode", "QuotaCode", "ContextId"})
    if unknown:
        raise ApiError(400, "SerializationException", "Unknown member %s (stand-in wording)." % unknown[0])
    service, code = req.get("ServiceCode"), req.get("QuotaCode")
    for member, value, pattern in (("ServiceCode", service, SERVICE_CODE_RE), ("QuotaCode", code, QUOTA_CODE_RE)):
        if not isinstance(value, str) or not pattern.match(value):
            raise ApiError(400, "IllegalArgumentException", "Invalid input was provided: %s must match %s (stand-in wording)."
                           % (member, pattern.pattern.strip("^$")))
    quotas = cfg.get("quotas", {})
    if service not in quotas:
        raise ApiError(400, "NoSuchResourceException", "The request failed because the specified service does not exist.")
    if code not in quotas[service]:
        raise ApiError(400, "NoSuchResourceException", "")
    if "ContextId" in req:
        raise ApiError(400, "NoSuchResourceException",
                       "The request failed because applied value for the specified context Id do not exist.")
    q = quotas[service][code]
    return {"Quota": {
        "ServiceCode": service,
        "ServiceName": SERVICE_NAMES.get(service, service),
        "QuotaArn": "arn:aws:servicequotas:%s:%s:%s/%s" % (cfg["region"], cfg.get("account_id", "123456789012"), service, code),
        "QuotaCode": code,
        "QuotaName": q.get("name", code),
        "Value": float(q["value"]),
        "Unit": "None",
        "Adjustable": q.get("adjustable", True),
        "GlobalQuota": False,
        "UsageMetric": {"MetricNamespace": "AWS/Usage", "MetricName": "ResourceCount",
                        "MetricDimensions": {"Class": q.get("usage_class", "Standard/OnDemand"), "Resource": "vCPU",
                                             "Service": "EC2", "Type": "Resource"},
                        "MetricStatisticRecommendation": "Maximum"},
        "QuotaAppliedAtLevel": "ACCOUNT",
    }}


SQ_OPERATIONS = {"GetServiceQuota": get_service_quota}


# ---- HTTP ----------------------------------------------------------------------------------------------

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "AmazonEC2"
    sys_version = ""

    def log_message(self, *args):
        pass

    def cfg(self):
        with open(self.server.config_path) as f:
            cfg = json.load(f)
        cfg["_resources"] = self.server.resources_path
        if self.server.resources_path:
            # The temporary credentials EC2 gave instances with an instance profile (tests/fakes/aws_iam.py).
            now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            with registry(self.server.resources_path) as reg:
                for c in reg["instance_credentials"]:
                    cfg.setdefault("credentials", {})[c["AccessKeyId"]] = {
                        "secret": c["_secret"], "session_token": c["_token"], "expired": c["Expiration"] < now,
                        "role": c["role"]}
        return cfg

    def headers_lower(self):
        out = {}
        for name, value in self.headers.items():
            out.setdefault(name.lower(), []).append(value)
        return out

    def reply(self, status, body, content_type, request_id):
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("x-amzn-RequestId", request_id)
            self.end_headers()
            self.wfile.write(body)
        except (OSError, ssl.SSLError):
            # The caller is gone (a master whose own StopInstances powered its node off): the action was done.
            self.close_connection = True

    def record(self, entry):
        with LOCK, open(self.server.config_path + ".requests", "a") as f:
            f.write(json.dumps(entry, sort_keys=True) + "\n")

    def injected(self, cfg, operation):
        if operation in cfg.get("delay", {}):
            time.sleep(cfg["delay"][operation])
        fail = cfg.get("fail", {}).get(operation)
        if fail is None:
            return
        spec = fail if isinstance(fail, dict) else {"status": fail}
        default = "InternalError" if spec["status"] >= 500 else "InvalidParameterValue"
        raise ApiError(spec["status"], spec.get("code", default), spec.get("message", "injected failure"))

    def handle_any(self):
        request_id = str(uuid.uuid4())
        headers = self.headers_lower()
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0") or "0")
        body = self.rfile.read(length) if length > 0 else b""
        protocol = {"servicequotas": "json", "iam": "iam"}.get(scope_service(headers), "ec2")
        entry = {"method": self.command, "path": url.path, "headers": sorted(headers), "service": protocol}
        try:
            cfg = self.cfg()
            now = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=cfg.get("clock_offset_seconds", 0))
            entry.update(authenticate(cfg, protocol, self.command, url.path, url.query, headers, body, now)
                         if protocol != "json" else authenticate(cfg, "servicequotas", self.command, url.path,
                                                                 url.query, headers, body, now))
            key = headers["authorization"][0].split("Credential=", 1)[1].split("/", 1)[0]
            cfg["_caller_role"] = cfg["credentials"][key].get("role")
            if cfg["_caller_role"]:
                entry["role"] = cfg["_caller_role"]
            if protocol == "iam":
                params = urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
                entry["params"] = sorted({n for n, _ in params})
                entry["operation"] = dict(params).get("Action", "")
                action, result = iam_dispatch(cfg, params)
                self.reply(200, iam_response_body(action, request_id, result), "text/xml", request_id)
            elif protocol == "ec2":
                params = urllib.parse.parse_qsl(url.query, keep_blank_values=True)
                if self.command == "POST":
                    params += urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
                entry["params"] = sorted({n for n, _ in params})
                operation = dict(params).get("Action", "")
                entry["operation"] = operation
                self.injected(cfg, operation)
                action, parts = ec2_dispatch(cfg, params)
                out = ec2_response_body(action, request_id, parts)
                self.reply(200, out, "text/xml;charset=UTF-8", request_id)
            else:
                target = headers.get("x-amz-target", [""])[0]
                operation = target[len(SQ_TARGET_PREFIX):] if target.startswith(SQ_TARGET_PREFIX) else ""
                entry["operation"] = operation or target
                entry["content_type"] = headers.get("content-type", [""])[0]
                if self.command != "POST" or url.path != "/" or operation not in SQ_OPERATIONS:
                    raise ApiError(404, "UnknownOperationException", "")
                self.injected(cfg, operation)
                out = json.dumps(SQ_OPERATIONS[operation](cfg, body)).encode()
                self.reply(200, out, "application/x-amz-json-1.1", request_id)
            entry["status"] = 200
        except ApiError as err:
            if protocol == "iam":
                self.reply(err.status, iam_error_body(err, request_id), "text/xml", request_id)
            elif protocol == "ec2":
                self.reply(err.status, ec2_error_body(err, request_id), "text/xml;charset=UTF-8", request_id)
            else:
                if err.code == "InternalError":
                    err.code = "ServiceException"
                modeled = err.code in ("NoSuchResourceException", "IllegalArgumentException", "AccessDeniedException",
                                       "ServiceException", "TooManyRequestsException")
                # Modeled exceptions carry "Message" (the model's member); the framework's own carry "message".
                out = {"__type": err.code, ("Message" if modeled else "message"): err.message}
                self.reply(err.status, json.dumps(out).encode(), "application/x-amz-json-1.1", request_id)
            entry.update({"status": err.status, "error": err.code}, **err.detail)
        self.record(entry)

    do_GET = handle_any
    do_POST = handle_any


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--config")
    ap.add_argument("--port-file")
    ap.add_argument("--listen", default="127.0.0.1",
                    help="address to listen on (0.0.0.0: also for the nodes, whose master reaches this machine)")
    ap.add_argument("--resources", default=os.environ.get("FAKE_AWS_RESOURCES") or None,
                    help="the simulated region's registry (default: $FAKE_AWS_RESOURCES; none: not served)")
    ap.add_argument("--self-test", action="store_true", help="check the signer against AWS's published example")
    a = ap.parse_args()
    if a.self_test:
        sys.exit(0 if self_test() else 1)
    if not (a.cert and a.key and a.config and a.port_file):
        ap.error("--cert, --key, --config and --port-file are required")
    if not self_test(verbose=False):
        sys.exit("aws_api.py: the SigV4 signer does not reproduce AWS's published example")
    srv = http.server.ThreadingHTTPServer((a.listen, 0), Handler)
    srv.daemon_threads = True
    srv.config_path = a.config
    srv.resources_path = os.path.abspath(a.resources) if a.resources else None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_port))
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
