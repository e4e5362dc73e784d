#!/usr/bin/env python3
"""HTTPS stand-in for the AWS APIs ddl's pre-flight reads: EC2 and Service Quotas (python3 stdlib only).

  aws_api.py --cert server.pem --key server.key --config aws.json --port-file PORT
  aws_api.py --self-test        checks the signer against AWS's published example, then exits

Documents it follows:
  - Signature Version 4: "Create a signed AWS API request" and "Elements of an AWS API request signature",
    AWS Identity and Access Management User Guide,
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
    (its GET ListUsers example is the --self-test: canonical request hash f536975d...1a59,
    signature 5d672d79...b5d7).
  - "Query requests for Amazon EC2", Amazon EC2 API Reference,
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/Query-Requests.html (GET or POST, Action, Version)
    and "Common query parameters", .../APIReference/CommonParameters.html (Action and Version required).
  - Amazon EC2 API Reference, actions DescribeInstanceTypeOfferings, DescribeImages, DescribeInstanceTypes,
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeImages.html (and ..._DescribeInstanceTypes,
    ..._DescribeInstanceTypeOfferings); element names as in botocore's model ec2/2016-11-15 (xmlNamespace
    http://ec2.amazonaws.com/doc/2016-11-15, sent with a trailing slash on the wire).
  - "Error codes for the Amazon EC2 API", section "Common client error codes" and "Example error response",
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html
    (<Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>).
  - Service Quotas API Reference, GetServiceQuota,
    https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_GetServiceQuota.html; protocol from
    botocore's model service-quotas/2019-06-24 (JSON 1.1, X-Amz-Target ServiceQuotasV20190624.<Operation>).
  - "Common Errors" shared by the AWS API references (UnrecognizedClientException 403, ExpiredTokenException 403,
    UnknownOperationException 404, RequestExpired 400), e.g.
    https://docs.aws.amazon.com/awsconsolehelpdocs/latest/gsg/common-errors.html
Where these are silent, the status or wording observed from the real services in public reports is used
(docs/research/aws-research.md lists them): AuthFailure 401 "AWS was not able to validate the provided access
credentials"; SignatureDoesNotMatch 403; InvalidAction "The action X is not valid for this web service.";
UnknownParameter "The parameter X is not recognized"; InvalidAMIID.Malformed for an id not starting "ami-";
InvalidAMIID.NotFound "The image id '[ami-...]' does not exist"; InvalidInstanceType "The following supplied
instance types do not exist: [...]"; a Filter that matches nothing gives an empty set; GetServiceQuota's
NoSuchResourceException for an unknown service ("The request failed because the specified service does not
exist.") and, with an empty message, for a quota with no applied value. Wording marked "stand-in" below
is this file's own.

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
Every request is appended to <config>.requests as one JSON line (service, operation, method, path, header
names, parameter names, signed headers, status, error code, and on a signature mismatch the canonical request
and string to sign the stand-in expected); never a secret, a token or a signature.
"""
import argparse
import base64
import datetime
import fnmatch
import hashlib
import hmac
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
from xml.sax.saxutils import escape

EC2_VERSION = "2016-11-15"
EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
SQ_TARGET_PREFIX = "ServiceQuotasV20190624."
ALGORITHM = "AWS4-HMAC-SHA256"
MAX_SKEW = 15 * 60
LOCK = threading.Lock()


class ApiError(Exception):
    """An error answer: code, message and HTTP status, written in the protocol of the request's service."""

    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.detail = {}


# ---- Signature Version 4 ------------------------------------------------------------------------------

def uri_encode(text, keep_slash=False):
    """RFC 3986 encoding as SigV4 wants it: unreserved A-Z a-z 0-9 - _ . ~ kept, everything else %XX (upper)."""
    return urllib.parse.quote(text, safe="-_.~" + ("/" if keep_slash else ""))


def canonical_uri(raw_path):
    """The path as received (already percent-encoded), normalized, then encoded once more (non-S3 services)."""
    segments = []
    for seg in raw_path.split("/"):
        if seg == "..":
            if segments:
                segments.pop()
        elif seg not in ("", "."):
            segments.append(seg)
    path = "/" + "/".join(segments)
    if raw_path.endswith("/") and path != "/":
        path += "/"
    return uri_encode(path, keep_slash=True)


def canonical_query(raw_query):
    """Query parameters decoded, re-encoded, sorted by name then value, joined with '&'."""
    pairs = []
    for part in raw_query.split("&") if raw_query else []:
        name, _, value = part.partition("=")
        pairs.append((uri_encode(urllib.parse.unquote(name)), uri_encode(urllib.parse.unquote(value))))
    return "&".join("%s=%s" % p for p in sorted(pairs))


def canonical_header_value(values):
    return ",".join(" ".join(v.strip().split()) for v in values)


def canonical_request(method, raw_path, raw_query, headers, signed_headers, body):
    """headers: {lowercase name: [values]}; signed_headers: list of lowercase names, sorted."""
    lines = [method, canonical_uri(raw_path), canonical_query(raw_query)]
    lines += ["%s:%s" % (h, canonical_header_value(headers.get(h, []))) for h in signed_headers]
    return "\n".join(lines) + "\n\n" + ";".join(signed_headers) + "\n" + hashlib.sha256(body).hexdigest()


def string_to_sign(amz_date, scope, creq):
    return "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(creq.encode()).hexdigest()])


def signature(secret, date, region, service, sts):
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()


def self_test(verbose=True):
    """AWS's published example (IAM User Guide, "Create a signed AWS API request": GET ListUsers)."""
    headers = {"content-type": ["application/x-www-form-urlencoded; charset=utf-8"],
               "host": ["iam.amazonaws.com"], "x-amz-date": ["20150830T123600Z"]}
    creq = canonical_request("GET", "/", "Action=ListUsers&Version=2010-05-08", headers,
                             ["content-type", "host", "x-amz-date"], b"")
    digest = hashlib.sha256(creq.encode()).hexdigest()
    sts = string_to_sign("20150830T123600Z", "20150830/us-east-1/iam/aws4_request", creq)
    sig = signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830", "us-east-1", "iam", sts)
    ok = (digest == "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59"
          and sig == "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")
    # Also: the query is canonicalized (sorted, re-encoded), whatever order the client sent.
    ok = ok and canonical_query("Version=2016-11-15&Action=DescribeImages&ImageId.1=ami-1") == \
        "Action=DescribeImages&ImageId.1=ami-1&Version=2016-11-15"
    ok = ok and canonical_query("a=b%20c&a=b+c") == "a=b%20c&a=b%2Bc"
    if verbose or not ok:
        print("self-test: canonical request hash %s, signature %s: %s" % (digest, sig, "ok" if ok else "MISMATCH"))
    return ok


AUTH_RE = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$")


def authenticate(cfg, service_protocol, method, raw_path, raw_query, headers, body, now):
    """Checks the request's SigV4 signature. Returns what the request log shows of it; raises ApiError."""
    ec2 = service_protocol == "ec2"
    auth = headers.get("authorization", [])
    if not auth:
        raise ApiError(403, "MissingAuthenticationToken",
                       "Request is missing Authentication Token" if not ec2 else
                       "The request must contain either a valid (registered) AWS access key ID or X.509 certificate.")
    if not auth[0].startswith(ALGORITHM + " "):
        raise ApiError(400, "IncompleteSignature", "Unsupported AWS 'algorithm': '%s'" % auth[0].split(" ")[0])
    m = AUTH_RE.match(auth[0].strip())
    if not m:
        raise ApiError(400, "IncompleteSignature",
                       "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters, "
                       "separated by ', ' (stand-in wording).")
    credential, signed_list, given = m.groups()
    parts = credential.split("/")
    if len(parts) != 5 or parts[4] != "aws4_request":
        raise ApiError(400, "IncompleteSignature",
                       "Credential should be scoped with a valid terminator: 'aws4_request', not '%s'." % parts[-1])
    key, date, region, service = parts[:4]
    signed = signed_list.split(";")
    if signed != sorted(signed) or any(h != h.lower() for h in signed):
        raise ApiError(400, "IncompleteSignature", "SignedHeaders must be lowercase and sorted (stand-in wording).")
    if "host" not in signed:
        raise ApiError(400, "IncompleteSignature", "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")
    amz_date = headers.get("x-amz-date", [""])[0]
    try:
        when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        raise ApiError(400, "IncompleteSignature",
                       "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
    if "x-amz-date" not in signed:
        raise ApiError(400, "IncompleteSignature", "'X-Amz-Date' must be a 'SignedHeader' when it is sent (stand-in wording).")
    if date != amz_date[:8]:
        raise ApiError(403, "SignatureDoesNotMatch",
                       "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
                       "'%s' != '%s', from 'x-amz-date'." % (date, amz_date[:8]))
    if region != cfg["region"]:
        raise ApiError(403, "SignatureDoesNotMatch", "Credential should be scoped to a valid region, not '%s'." % region)
    if service not in ("ec2", "servicequotas"):
        raise ApiError(403, "SignatureDoesNotMatch", "Credential should be scoped to correct service: 'ec2' or "
                       "'servicequotas', not '%s' (stand-in: one port serves both)." % service)
    cred = cfg.get("credentials", {}).get(key)
    token = headers.get("x-amz-security-token", [None])[0]
    bad_client = ApiError(401, "AuthFailure", "AWS was not able to validate the provided access credentials") if ec2 else \
        ApiError(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
    if cred is None:
        raise bad_client
    expected_token = cred.get("session_token")
    # A temporary key needs its token; a permanent key must come without one.
    if (expected_token is None) != (token is None) or (token is not None and not hmac.compare_digest(token, expected_token)):
        raise bad_client
    if abs((now - when).total_seconds()) > MAX_SKEW:
        raise ApiError(400, "RequestExpired", "Request has expired." if ec2 else
                       "Request has expired. (the date stamp is more than 15 minutes from the server's time)")
    if expected_token is not None and cred.get("expired"):
        raise ApiError(400, "RequestExpired", "Request has expired.") if ec2 else \
            ApiError(403, "ExpiredTokenException", "The security token included in the request is expired")
    creq = canonical_request(method, raw_path, raw_query, headers, signed, body)
    sts = string_to_sign(amz_date, "/".join(parts[1:]), creq)
    want = signature(cred["secret"], date, region, service, sts)
    if not hmac.compare_digest(want, given):
        err = ApiError(403, "SignatureDoesNotMatch" if ec2 else "InvalidSignatureException",
                       "The request signature we calculated does not match the signature you provided. Check your AWS "
                       "Secret Access Key and signing method. Consult the service documentation for details.")
        shown = creq if token is None else creq.replace(token, "<session token>")
        err.detail = {"expected_canonical_request": shown, "expected_string_to_sign": sts}
        raise err
    return {"signed_headers": signed, "token_signed": "x-amz-security-token" in signed}


def scope_service(headers):
    """The service named in the credential scope, or None (the request is then answered as EC2)."""
    m = AUTH_RE.match(headers.get("authorization", [""])[0].strip())
    parts = m.group(1).split("/") if m else []
    return parts[3] if len(parts) == 5 and parts[3] == "servicequotas" else None


# ---- EC2 Query API -------------------------------------------------------------------------------------

LIST_PARAMS = {
    "DescribeInstanceTypeOfferings": set(),
    "DescribeImages": {"ExecutableBy", "ImageId", "Owner"},
    "DescribeInstanceTypes": {"InstanceType"},
}
SCALAR_PARAMS = {
    "DescribeInstanceTypeOfferings": {"DryRun", "LocationType", "MaxResults", "NextToken"},
    "DescribeImages": {"IncludeDeprecated", "IncludeDisabled", "MaxResults", "NextToken", "DryRun"},
    "DescribeInstanceTypes": {"DryRun", "MaxResults", "NextToken", "IncludeUnsupportedInRegion"},
}
MAX_RESULTS = {"DescribeInstanceTypeOfferings": (5, 1000), "DescribeImages": (1, 1000), "DescribeInstanceTypes": (5, 100)}
FILTERS = {
    "DescribeInstanceTypeOfferings": {"instance-type", "location"},
    "DescribeImages": {"image-id", "name", "state", "architecture", "owner-id", "owner-alias", "is-public"},
    "DescribeInstanceTypes": {"instance-type"},
}
FILTER_RE = re.compile(r"^Filter\.(\d+)\.(Name|Value\.(\d+))$")
LIST_RE = re.compile(r"^([A-Za-z]+)\.(\d+)$")


class Ec2Request:
    """The parameters of one EC2 Query request, checked against the action's input shape."""

    def __init__(self, action, params):
        self.action, self.scalars, self.lists, self.filters = action, {}, {}, {}
        filters = {}
        for name, value in params:
            if name in ("Action", "Version"):
                continue
            f = FILTER_RE.match(name)
            lm = LIST_RE.match(name)
            if f:
                entry = filters.setdefault(int(f.group(1)), {"name": None, "values": {}})
                if f.group(2) == "Name":
                    entry["name"] = value
                else:
                    entry["values"][int(f.group(3))] = value
            elif lm and lm.group(1) in LIST_PARAMS[action]:
                self.lists.setdefault(lm.group(1), {})[int(lm.group(2))] = value
            elif name in SCALAR_PARAMS[action]:
                self.scalars[name] = value
            else:
                raise ApiError(400, "UnknownParameter", "The parameter %s is not recognized" % name)
        self.lists = {k: [v[i] for i in sorted(v)] for k, v in self.lists.items()}
        for index in sorted(filters):
            entry = filters[index]
            if entry["name"] is None:
                raise ApiError(400, "InvalidParameterValue", "The filter 'Filter.%d' has no Name (stand-in wording)." % index)
            if entry["name"] not in FILTERS[action]:
                raise ApiError(400, "InvalidParameterValue", "The filter '%s' is invalid" % entry["name"])
            self.filters.setdefault(entry["name"], []).extend(entry["values"][i] for i in sorted(entry["values"]))

    def flag(self, name):
        value = self.scalars.get(name)
        if value is None:
            return False
        if value.lower() not in ("true", "false"):
            raise ApiError(400, "InvalidParameterValue",
                           "Invalid value '%s' for %s: a boolean is expected (stand-in wording)." % (value, name))
        return value.lower() == "true"

    def matches(self, name, value):
        """A filter with several values matches any of them; * and ? are wildcards."""
        if name not in self.filters:
            return True
        return any(fnmatch.fnmatchcase(str(value), pattern) for pattern in self.filters[name])

    def page(self, items):
        """MaxResults/NextToken over the whole result; returns (items, next_token or None)."""
        lo, hi = MAX_RESULTS[self.action]
        start = 0
        if "NextToken" in self.scalars:
            try:
                start = int(base64.urlsafe_b64decode(self.scalars["NextToken"].encode()).decode().split(":")[1])
            except (ValueError, IndexError, UnicodeDecodeError):
                raise ApiError(400, "InvalidPaginationToken", "Invalid pagination token (stand-in wording).")
        if "MaxResults" not in self.scalars:
            return items[start:], None
        try:
            size = int(self.scalars["MaxResults"])
        except ValueError:
            size = -1
        if not lo <= size <= hi:
            raise ApiError(400, "InvalidParameterValue", "Value (%s) for parameter maxResults is invalid. Expecting a "
                           "value between %d and %d (stand-in wording)." % (self.scalars["MaxResults"], lo, hi))
        end = start + size
        token = base64.urlsafe_b64encode(("page:%d" % end).encode()).decode() if end < len(items) else None
        return items[start:end], token


def xml_element(name, value):
    """<name>value</name>; value may be a str/int/bool, a list (items), a dict (children) or None (left out)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "<%s>%s</%s>" % (name, "true" if value else "false", name)
    if isinstance(value, list):
        return "<%s>%s</%s>" % (name, "".join(xml_element("item", v) for v in value), name)
    if isinstance(value, dict):
        return "<%s>%s</%s>" % (name, "".join(xml_element(k, v) for k, v in value.items()), name)
    return "<%s>%s</%s>" % (name, escape(str(value)), name)


def offered_types(cfg, include_unsupported=False):
    return {n: t for n, t in sorted(cfg.get("instance_types", {}).items()) if include_unsupported or t.get("offered", True)}


def describe_instance_type_offerings(cfg, req):
    location_type = req.scalars.get("LocationType", "region")
    if location_type not in ("region", "availability-zone", "availability-zone-id", "outpost"):
        raise ApiError(400, "InvalidParameterValue",
                       "Value (%s) for parameter locationType is invalid. (stand-in wording)" % location_type)
    items = []
    for name, t in offered_types(cfg).items():
        if location_type == "region":
            locations = [cfg["region"]]
        elif location_type == "availability-zone":
            locations = t.get("zones", [])
        else:
            locations = []  # the stand-in knows no zone ids or outposts
        for loc in locations:
            if req.matches("instance-type", name) and req.matches("location", loc):
                items.append({"instanceType": name, "locationType": location_type, "location": loc})
    items, token = req.page(items)
    return [("instanceTypeOfferingSet", items), ("nextToken", token)]


def image_item(cfg, image_id, img):
    root = img.get("root_device_name", "/dev/sda1")
    return {
        "imageId": image_id,
        "imageLocation": "%s/%s" % (img.get("owner_alias") or img.get("owner_id", cfg.get("account_id", "")),
                                    img.get("name", "")),
        "imageState": img.get("state", "available"),
        "imageOwnerId": img.get("owner_id", cfg.get("account_id", "123456789012")),
        "creationDate": img.get("creation_date", "2025-01-01T00:00:00.000Z"),
        "isPublic": img.get("public", True),
        "architecture": img.get("architecture", "x86_64"),
        "imageType": "machine",
        "imageOwnerAlias": img.get("owner_alias"),
        "name": img.get("name", ""),
        "description": img.get("description"),
        "rootDeviceType": "ebs",
        "rootDeviceName": root,
        "blockDeviceMapping": [{"deviceName": root, "ebs": {
            "snapshotId": "snap-" + hashlib.sha256(image_id.encode()).hexdigest()[:17],
            "volumeSize": img.get("root_gb", 8), "deleteOnTermination": True, "volumeType": "gp3", "encrypted": False}}],
        "virtualizationType": "hvm",
        "hypervisor": "xen",
        "enaSupport": True,
        "sriovNetSupport": "simple",
        "platformDetails": "Linux/UNIX",
        "usageOperation": "RunInstances",
        "bootMode": img.get("boot_mode"),
    }


def describe_images(cfg, req):
    images = cfg.get("images", {})
    ids = req.lists.get("ImageId", [])
    for image_id in ids:
        if not image_id.startswith("ami-"):
            raise ApiError(400, "InvalidAMIID.Malformed", 'Invalid id: "%s" (expecting "ami-...")' % image_id)
    missing = [i for i in ids if i not in images]
    if len(missing) == 1:
        raise ApiError(400, "InvalidAMIID.NotFound", "The image id '[%s]' does not exist" % missing[0])
    if missing:
        raise ApiError(400, "InvalidAMIID.NotFound",
                       "The image ids '[%s]' do not exist (stand-in wording for several)" % ", ".join(missing))
    owners = req.lists.get("Owner", [])
    account = cfg.get("account_id", "123456789012")
    items = []
    for image_id in (ids or sorted(images)):
        img = images[image_id]
        owner_id, alias = img.get("owner_id", account), img.get("owner_alias")
        if owners and not any(o in (owner_id, alias) or (o == "self" and owner_id == account) for o in owners):
            continue
        item = image_item(cfg, image_id, img)
        if all(req.matches(f, v) for f, v in (("image-id", image_id), ("name", item["name"]), ("state", item["imageState"]),
                                               ("architecture", item["architecture"]), ("owner-id", owner_id),
                                               ("owner-alias", alias or ""), ("is-public", str(item["isPublic"]).lower()))):
            items.append(item)
    req.flag("IncludeDeprecated")
    req.flag("IncludeDisabled")
    items, token = req.page(items)
    return [("imagesSet", items), ("nextToken", token)]


def instance_type_item(name, t):
    gpus = t.get("gpus")
    info = {
        "instanceType": name,
        "currentGeneration": True,
        "supportedUsageClasses": ["on-demand"] + (["spot"] if t.get("spot", True) else []),
        "supportedRootDeviceTypes": ["ebs"],
        "supportedVirtualizationTypes": ["hvm"],
        "bareMetal": name.endswith(".metal"),
        "hypervisor": None if name.endswith(".metal") else "nitro",
        "processorInfo": {"supportedArchitectures": t.get("architectures", ["x86_64"])},
        "vCpuInfo": {"defaultVCpus": t["vcpus"], "defaultCores": t.get("cores", max(1, t["vcpus"] // 2)),
                     "defaultThreadsPerCore": t.get("threads_per_core", 2 if t["vcpus"] > 1 else 1)},
        "memoryInfo": {"sizeInMiB": t.get("memory_mib", t["vcpus"] * 4096)},
        "instanceStorageSupported": False,
        "networkInfo": {"networkPerformance": t.get("network_performance", "Up to 10 Gigabit"),
                        "efaSupported": t.get("efa", False)},
        "gpuInfo": None if not gpus else {
            "gpus": [{"name": gpus["name"], "manufacturer": gpus.get("manufacturer", "NVIDIA"), "count": gpus["count"],
                      "memoryInfo": {"sizeInMiB": gpus.get("memory_mib", 0)}}],
            "totalGpuMemoryInMiB": gpus["count"] * gpus.get("memory_mib", 0)},
        "placementGroupInfo": {"supportedStrategies": t.get("placement_strategies", ["cluster", "partition", "spread"])},
    }
    return info


def describe_instance_types(cfg, req):
    include_unsupported = req.flag("IncludeUnsupportedInRegion")
    known = offered_types(cfg, include_unsupported)
    names = req.lists.get("InstanceType", [])
    if len(names) > 100:
        raise ApiError(400, "InvalidParameterValue", "At most 100 instance types can be given (stand-in wording).")
    missing = [n for n in names if n not in known]
    if missing:
        raise ApiError(400, "InvalidInstanceType",
                       "The following supplied instance types do not exist: [%s]" % ", ".join(missing))
    items = [instance_type_item(n, known[n]) for n in (names or known) if req.matches("instance-type", n)]
    items, token = req.page(items)
    return [("instanceTypeSet", items), ("nextToken", token)]


EC2_ACTIONS = {
    "DescribeInstanceTypeOfferings": describe_instance_type_offerings,
    "DescribeImages": describe_images,
    "DescribeInstanceTypes": describe_instance_types,
}


def ec2_dispatch(cfg, params):
    """params: list of (name, value). Returns (action, XML body); raises ApiError."""
    names = [n for n, _ in params]
    values = dict(params)
    if "Action" not in values:
        raise ApiError(400, "MissingAction", "The request must contain the parameter Action (stand-in wording).")
    action = values["Action"]
    if action not in EC2_ACTIONS:
        raise ApiError(400, "InvalidAction", "The action %s is not valid for this web service." % action)
    if "Version" not in values:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter Version (stand-in wording).")
    if values["Version"] != EC2_VERSION:
        raise ApiError(400, "NoSuchVersion", "The requested version (%s) of service AmazonEC2 does not exist "
                       "(the stand-in serves only %s)" % (values["Version"], EC2_VERSION))
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ApiError(400, "InvalidParameterValue", "The parameter %s is given more than once (stand-in wording)." % dup)
    req = Ec2Request(action, params)
    if req.flag("DryRun"):
        raise ApiError(412, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
    parts = EC2_ACTIONS[action](cfg, req)
    return action, parts


def ec2_response_body(action, request_id, parts):
    inner = "".join(xml_element(name, value) for name, value in parts)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<%sResponse xmlns="%s"><requestId>%s</requestId>%s</%sResponse>'
            % (action, EC2_NS, request_id, inner, action)).encode()


def ec2_error_body(err, request_id):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>%s</Code><Message>%s</Message>'
            '</Error></Errors><RequestID>%s</RequestID></Response>' % (escape(err.code), escape(err.message), request_id)).encode()


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
            return json.load(f)

    def headers_lower(self):
        out = {}
        for name, value in self.headers.items():
            out.setdefault(name.lower(), []).append(value)
        return out

    def reply(self, status, body, content_type, request_id):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-amzn-RequestId", request_id)
        self.end_headers()
        self.wfile.write(body)

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
        protocol = "json" if scope_service(headers) == "servicequotas" else "ec2"
        entry = {"method": self.command, "path": url.path, "headers": sorted(headers), "service": protocol}
        try:
            cfg = self.cfg()
            now = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=cfg.get("clock_offset_seconds", 0))
            entry.update(authenticate(cfg, protocol, self.command, url.path, url.query, headers, body, now))
            if protocol == "ec2":
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
            if protocol == "ec2":
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
    ap.add_argument("--self-test", action="store_true", help="check the signer against AWS's published example")
    a = ap.parse_args()
    if a.self_test:
        sys.exit(0 if self_test() else 1)
    if not (a.cert and a.key and a.config and a.port_file):
        ap.error("--cert, --key, --config and --port-file are required")
    if not self_test(verbose=False):
        sys.exit("aws_api.py: the SigV4 signer does not reproduce AWS's published example")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.config_path = a.config
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_port))
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
