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
  - The same reference for the simulated region (--resources): API_DescribeInstances (Filter.N with
    tag:<key>, instance-state-name, instance-id; reservationSet/instancesSet, instanceState code and name,
    launchTime, tagSet; MaxResults 5-1000 and NextToken), API_TerminateInstances (instancesSet with
    currentState/previousState; the instance is shutting-down, then terminated and still listed),
    API_DescribeSecurityGroups (securityGroupInfo, ipPermissions with groups), API_RevokeSecurityGroupIngress
    (GroupId, IpPermissions.N), API_DeleteSecurityGroup, API_DescribeSubnets/API_DeleteSubnet,
    API_DescribeInternetGateways (attachmentSet)/API_DetachInternetGateway/API_DeleteInternetGateway,
    API_DescribeRouteTables (associationSet, main)/API_DeleteRouteTable, API_DescribeVpcs/API_DeleteVpc,
    API_DescribeKeyPairs (keySet)/API_DeleteKeyPair (succeeds for a key that does not exist),
    API_DescribePlacementGroups/API_DeletePlacementGroup; "Error codes for the Amazon EC2 API":
    DependencyViolation ("The specified object has dependent resources"), InvalidGroup.NotFound,
    InvalidSubnetID.NotFound, InvalidInternetGatewayID.NotFound, Gateway.NotAttached,
    InvalidRouteTableID.NotFound, InvalidVpcID.NotFound, InvalidInstanceID.NotFound,
    InvalidPlacementGroup.Unknown, InvalidPlacementGroup.InUse. Which deletes EC2 refuses: "Delete your VPC"
    (Amazon VPC User Guide: subnets, security groups, route tables and gateways first), "Delete a security
    group" (not while an instance or another group's rule uses it), "Detach an internet gateway" (not while
    instances in the VPC have public addresses), "Delete a subnet" (not while it has network interfaces).
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
The simulated region: --resources FILE (default $FAKE_AWS_RESOURCES; unset: none, and only the actions
above are served) is the registry the Terraform stand-in (tests/fakes/terraform) writes when it creates and
deletes the AWS module's resources, read and written under flock(2) on FILE.lock:
  {"instances": [...], "security_groups": [...], "subnets": [...], "internet_gateways": [...],
   "route_tables": [...], "vpcs": [...], "key_pairs": [...], "placement_groups": [...]}
each entry in the shape of its Describe* item (element names as keys), plus private keys starting with "_"
that are never served: an instance's "_fake_nodes" {"id", "state_dir", "node", "tool"} (its ddl-fake-nodes
node, taken down when it is terminated) and "_since" (when it began shutting down: it is terminated a
second later).
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

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import openstack_api  # noqa: E402  the registry's locking and ddl-fake-nodes handling, shared

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
    "DescribeInstances": {"InstanceId"},
    "TerminateInstances": {"InstanceId"},
    "DescribeSecurityGroups": {"GroupId", "GroupName"},
    "DescribeSubnets": {"SubnetId"},
    "DescribeInternetGateways": {"InternetGatewayId"},
    "DescribeRouteTables": {"RouteTableId"},
    "DescribeVpcs": {"VpcId"},
    "DescribeKeyPairs": {"KeyName", "KeyPairId"},
    "DescribePlacementGroups": {"GroupName", "GroupId"},
}
DESCRIBE_PAGED = {"DryRun", "MaxResults", "NextToken"}
SCALAR_PARAMS = {
    "DescribeInstanceTypeOfferings": {"DryRun", "LocationType", "MaxResults", "NextToken"},
    "DescribeImages": {"IncludeDeprecated", "IncludeDisabled", "MaxResults", "NextToken", "DryRun"},
    "DescribeInstanceTypes": {"DryRun", "MaxResults", "NextToken", "IncludeUnsupportedInRegion"},
    "DescribeInstances": DESCRIBE_PAGED,
    "TerminateInstances": {"DryRun", "Force", "SkipOsShutdown"},
    "DescribeSecurityGroups": DESCRIBE_PAGED,
    "DescribeSubnets": DESCRIBE_PAGED,
    "DescribeInternetGateways": DESCRIBE_PAGED,
    "DescribeRouteTables": DESCRIBE_PAGED,
    "DescribeVpcs": DESCRIBE_PAGED,
    "DescribeKeyPairs": {"DryRun", "IncludePublicKey"},
    "DescribePlacementGroups": {"DryRun"},
    "RevokeSecurityGroupIngress": {"DryRun", "GroupId", "GroupName"},
    "DeleteSecurityGroup": {"DryRun", "GroupId", "GroupName"},
    "DeleteSubnet": {"DryRun", "SubnetId"},
    "DetachInternetGateway": {"DryRun", "InternetGatewayId", "VpcId"},
    "DeleteInternetGateway": {"DryRun", "InternetGatewayId"},
    "DeleteRouteTable": {"DryRun", "RouteTableId"},
    "DeleteVpc": {"DryRun", "VpcId"},
    "DeleteKeyPair": {"DryRun", "KeyName", "KeyPairId"},
    "DeletePlacementGroup": {"DryRun", "GroupName"},
}
# Structured parameters (API_RevokeSecurityGroupIngress: IpPermissions.N.<member>).
PATTERN_PARAMS = {
    "RevokeSecurityGroupIngress": re.compile(r"^IpPermissions\.\d+\.(IpProtocol|FromPort|ToPort|Groups\.\d+\.GroupId|"
                                             r"IpRanges\.\d+\.CidrIp|Ipv6Ranges\.\d+\.CidrIpv6)$"),
}
MAX_RESULTS = {"DescribeInstanceTypeOfferings": (5, 1000), "DescribeImages": (1, 1000), "DescribeInstanceTypes": (5, 100),
               "DescribeInstances": (5, 1000), "DescribeSecurityGroups": (5, 1000), "DescribeSubnets": (5, 1000),
               "DescribeInternetGateways": (5, 1000), "DescribeRouteTables": (5, 100), "DescribeVpcs": (5, 1000)}
FILTERS = {
    "DescribeInstanceTypeOfferings": {"instance-type", "location"},
    "DescribeImages": {"image-id", "name", "state", "architecture", "owner-id", "owner-alias", "is-public"},
    "DescribeInstanceTypes": {"instance-type"},
    "DescribeInstances": {"instance-id", "instance-state-name", "vpc-id", "subnet-id", "tag-key"},
    "DescribeSecurityGroups": {"group-id", "group-name", "vpc-id", "tag-key"},
    "DescribeSubnets": {"subnet-id", "vpc-id", "tag-key"},
    "DescribeInternetGateways": {"internet-gateway-id", "attachment.vpc-id", "tag-key"},
    "DescribeRouteTables": {"route-table-id", "vpc-id", "association.main", "tag-key"},
    "DescribeVpcs": {"vpc-id", "tag-key"},
    "DescribeKeyPairs": {"key-name", "key-pair-id", "tag-key"},
    "DescribePlacementGroups": {"group-name", "strategy", "tag-key"},
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
            elif lm and lm.group(1) in LIST_PARAMS.get(action, set()):
                self.lists.setdefault(lm.group(1), {})[int(lm.group(2))] = value
            elif name in SCALAR_PARAMS[action] or (action in PATTERN_PARAMS and PATTERN_PARAMS[action].match(name)):
                self.scalars[name] = value
            else:
                raise ApiError(400, "UnknownParameter", "The parameter %s is not recognized" % name)
        self.lists = {k: [v[i] for i in sorted(v)] for k, v in self.lists.items()}
        for index in sorted(filters):
            entry = filters[index]
            if entry["name"] is None:
                raise ApiError(400, "InvalidParameterValue", "The filter 'Filter.%d' has no Name (stand-in wording)." % index)
            # tag:<key> filters the resources that carry tags (every action with tag-key).
            if entry["name"] not in FILTERS[action] and not (entry["name"].startswith("tag:") and "tag-key" in FILTERS[action]):
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


# ---- the simulated region (--resources / FAKE_AWS_RESOURCES) ------------------------------------------

REGION_KINDS = ("instances", "security_groups", "subnets", "internet_gateways", "route_tables", "vpcs", "key_pairs",
                "placement_groups")
STATE_CODES = {"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48, "stopping": 64, "stopped": 80}
NODES_LOCK = threading.Lock()


def registry(path, write=False):
    """The region at PATH as a dict of REGION_KINDS lists, under flock(2) on PATH.lock (shared to read,
    exclusive to change: the Terraform stand-in changes it too); with write, saved atomically at the end.
    The OpenStack stand-in's registry does the locking and saving."""
    return openstack_api.registry(path, write, REGION_KINDS)


def new_id(prefix):
    """EC2's resource ids: a prefix and 17 hex digits."""
    return "%s-%s" % (prefix, uuid.uuid4().hex[:17])


def iso_now():
    """launchTime as EC2 writes it: ISO 8601 UTC with milliseconds."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def tag_set(tags):
    return [{"key": k, "value": v} for k, v in sorted(tags.items())]


def served(item):
    return {k: v for k, v in item.items() if not k.startswith("_")}


def tags_match(req, item):
    tags = {t["key"]: t["value"] for t in item.get("tagSet", [])}
    for name in req.filters:
        if name.startswith("tag:") and not req.matches(name, tags.get(name[4:], "\0")):
            return False
    return "tag-key" not in req.filters or any(req.matches("tag-key", k) for k in tags)


def region_path(cfg):
    path = cfg.get("_resources")
    if not path:
        raise ApiError(400, "InvalidAction", "The stand-in serves no region: start it with --resources (stand-in wording).")
    return path


def live(instance):
    return instance["instanceState"]["name"] != "terminated"


def settle(reg):
    """EC2 terminates in the background: an instance shutting down for a second is terminated."""
    for i in reg["instances"]:
        if i["instanceState"]["name"] == "shutting-down" and time.time() - i.get("_since", 0) >= 1:
            i["instanceState"] = {"code": STATE_CODES["terminated"], "name": "terminated"}


def describe_instances(cfg, req):
    with registry(region_path(cfg), write=True) as reg:
        settle(reg)
        ids = req.lists.get("InstanceId", [])
        known = {i["instanceId"] for i in reg["instances"]}
        missing = [i for i in ids if i not in known]
        if missing:
            raise ApiError(400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist" % "', '".join(missing))
        items = [i for i in reg["instances"] if (not ids or i["instanceId"] in ids) and tags_match(req, i) and
                 all(req.matches(f, v) for f, v in (("instance-id", i["instanceId"]),
                                                    ("instance-state-name", i["instanceState"]["name"]),
                                                    ("vpc-id", i.get("vpcId", "")), ("subnet-id", i.get("subnetId", ""))))]
    items, token = req.page(items)
    reservations = [{"reservationId": "r-" + i["instanceId"][2:], "ownerId": cfg.get("account_id", "123456789012"),
                     "groupSet": [], "instancesSet": [served(i)]} for i in items]
    return [("reservationSet", reservations), ("nextToken", token)]


def terminate_instances(cfg, req):
    """Each instance shuts down (its ddl-fake-nodes node is taken down: the other nodes of its cluster are
    brought up again without it, or the last one goes); terminating a terminated instance is no error."""
    ids = req.lists.get("InstanceId", [])
    if not ids:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter InstanceId")
    out = []
    with NODES_LOCK:
        with registry(region_path(cfg), write=True) as reg:
            settle(reg)
            by_id = {i["instanceId"]: i for i in reg["instances"]}
            missing = [i for i in ids if i not in by_id]
            if missing:
                raise ApiError(400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist" % "', '".join(missing))
            for iid in ids:
                i = by_id[iid]
                before = dict(i["instanceState"])
                nodes = i.get("_fake_nodes")
                if live(i) and i["instanceState"]["name"] != "shutting-down":
                    if nodes:
                        rest = [o["_fake_nodes"]["node"] for o in reg["instances"] if o is not i and live(o) and
                                o["instanceState"]["name"] != "shutting-down" and o["instanceId"] not in ids and
                                o.get("_fake_nodes", {}).get("id") == nodes["id"] and
                                o["_fake_nodes"].get("state_dir") == nodes["state_dir"]]
                        error = openstack_api.fake_nodes_without(nodes, rest)
                        if error:
                            raise ApiError(500, "InternalError", error)
                    i["instanceState"] = {"code": STATE_CODES["shutting-down"], "name": "shutting-down"}
                    i["_since"] = time.time()
                out.append({"instanceId": iid, "currentState": i["instanceState"], "previousState": before})
    return [("instancesSet", out)]


# kind: (registry list, id element, the Describe action's id list and id filter)
DESCRIBED = {
    "DescribeSecurityGroups": ("security_groups", "groupId", "GroupId", "group-id", "securityGroupInfo"),
    "DescribeSubnets": ("subnets", "subnetId", "SubnetId", "subnet-id", "subnetSet"),
    "DescribeInternetGateways": ("internet_gateways", "internetGatewayId", "InternetGatewayId", "internet-gateway-id",
                                 "internetGatewaySet"),
    "DescribeRouteTables": ("route_tables", "routeTableId", "RouteTableId", "route-table-id", "routeTableSet"),
    "DescribeVpcs": ("vpcs", "vpcId", "VpcId", "vpc-id", "vpcSet"),
    "DescribeKeyPairs": ("key_pairs", "keyPairId", "KeyPairId", "key-pair-id", "keySet"),
    "DescribePlacementGroups": ("placement_groups", "groupName", "GroupName", "group-name", "placementGroupSet"),
}
NOT_FOUND = {"security_groups": ("InvalidGroup.NotFound", "The security group '%s' does not exist"),
             "subnets": ("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist"),
             "internet_gateways": ("InvalidInternetGatewayID.NotFound", "The internetGateway ID '%s' does not exist"),
             "route_tables": ("InvalidRouteTableID.NotFound", "The routeTable ID '%s' does not exist"),
             "vpcs": ("InvalidVpcID.NotFound", "The vpc ID '%s' does not exist"),
             "key_pairs": ("InvalidKeyPair.NotFound", "The key pair '%s' does not exist"),
             "placement_groups": ("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.")}


def describe_region(cfg, req):
    kind, id_key, id_list, id_filter, set_name = DESCRIBED[req.action]
    with registry(region_path(cfg)) as reg:
        ids = req.lists.get(id_list, [])
        known = {r[id_key] for r in reg[kind]}
        missing = [i for i in ids if i not in known]
        if missing:
            code, message = NOT_FOUND[kind]
            raise ApiError(400, code, message % missing[0])
        extra = {"vpc-id": "vpcId", "group-name": "groupName", "key-name": "keyName", "strategy": "strategy"}
        items = [r for r in reg[kind] if (not ids or r[id_key] in ids) and tags_match(req, r) and req.matches(id_filter, r[id_key])
                 and all(req.matches(f, r.get(k, "")) for f, k in extra.items() if f in FILTERS[req.action])]
    if req.action in MAX_RESULTS:
        items, token = req.page(items)
        return [(set_name, [served(r) for r in items]), ("nextToken", token)]
    return [(set_name, [served(r) for r in items])]


def find_in(reg, kind, ident):
    key = {"security_groups": "groupId", "subnets": "subnetId", "internet_gateways": "internetGatewayId",
           "route_tables": "routeTableId", "vpcs": "vpcId", "key_pairs": "keyPairId", "placement_groups": "groupName"}[kind]
    r = next((r for r in reg[kind] if r[key] == ident), None)
    if r is None:
        code, message = NOT_FOUND[kind]
        raise ApiError(400, code, message % ident)
    return r


def dependency(what):
    return ApiError(400, "DependencyViolation", "The %s has dependencies and cannot be deleted." % what)


def changed(reg_change):
    """A Delete*/Detach*/Revoke* action over the region: REG_CHANGE(reg, req) raises or returns."""
    def action(cfg, req):
        with registry(region_path(cfg), write=True) as reg:
            settle(reg)
            reg_change(reg, req)
        return [("return", True)]
    return action


def need(req, name):
    value = req.scalars.get(name)
    if not value:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter %s" % name)
    return value


def revoke_ingress(reg, req):
    group = find_in(reg, "security_groups", need(req, "GroupId"))
    perms = {}
    for name, value in req.scalars.items():
        m = re.match(r"^IpPermissions\.(\d+)\.(.*)$", name)
        if m:
            perms.setdefault(int(m.group(1)), {})[m.group(2)] = value
    for p in perms.values():
        refs = sorted(v for k, v in p.items() if k.startswith("Groups."))
        match = [r for r in group["ipPermissions"] if r["ipProtocol"] == p.get("IpProtocol") and
                 str(r.get("fromPort", "")) == p.get("FromPort", "") and str(r.get("toPort", "")) == p.get("ToPort", "") and
                 sorted(g["groupId"] for g in r.get("groups", [])) == refs]
        if not match:
            raise ApiError(400, "InvalidPermission.NotFound",
                           "The specified rule does not exist in this security group.")
        group["ipPermissions"] = [r for r in group["ipPermissions"] if r not in match]


def delete_security_group(reg, req):
    gid = need(req, "GroupId")
    find_in(reg, "security_groups", gid)
    used = any(live(i) and any(g["groupId"] == gid for g in i.get("groupSet", [])) for i in reg["instances"])
    named = any(o["groupId"] != gid and any(g["groupId"] == gid for r in o.get("ipPermissions", []) for g in r.get("groups", []))
                for o in reg["security_groups"])
    if used or named:
        raise ApiError(400, "DependencyViolation", "resource %s has a dependent object" % gid)
    reg["security_groups"] = [g for g in reg["security_groups"] if g["groupId"] != gid]


def delete_subnet(reg, req):
    sid = need(req, "SubnetId")
    find_in(reg, "subnets", sid)
    if any(live(i) and i.get("subnetId") == sid for i in reg["instances"]):
        raise dependency("subnet '%s'" % sid)
    reg["subnets"] = [s for s in reg["subnets"] if s["subnetId"] != sid]
    for rt in reg["route_tables"]:
        rt["associationSet"] = [a for a in rt.get("associationSet", []) if a.get("subnetId") != sid]


def detach_internet_gateway(reg, req):
    gw = find_in(reg, "internet_gateways", need(req, "InternetGatewayId"))
    vpc = need(req, "VpcId")
    if not any(a["vpcId"] == vpc for a in gw.get("attachmentSet", [])):
        raise ApiError(400, "Gateway.NotAttached", "resource %s is not attached to network %s" % (gw["internetGatewayId"], vpc))
    if any(live(i) and i.get("vpcId") == vpc and i.get("ipAddress") for i in reg["instances"]):
        raise ApiError(400, "DependencyViolation", "Network %s has some mapped public address(es). Please unmap those "
                       "public address(es) before detaching the gateway." % vpc)
    gw["attachmentSet"] = [a for a in gw["attachmentSet"] if a["vpcId"] != vpc]


def delete_internet_gateway(reg, req):
    gw = find_in(reg, "internet_gateways", need(req, "InternetGatewayId"))
    if gw.get("attachmentSet"):
        raise dependency("internetGateway '%s'" % gw["internetGatewayId"])
    reg["internet_gateways"] = [g for g in reg["internet_gateways"] if g is not gw]


def delete_route_table(reg, req):
    rt = find_in(reg, "route_tables", need(req, "RouteTableId"))
    if rt.get("associationSet"):
        raise dependency("routeTable '%s'" % rt["routeTableId"])
    reg["route_tables"] = [r for r in reg["route_tables"] if r is not rt]


def delete_vpc(reg, req):
    vid = need(req, "VpcId")
    find_in(reg, "vpcs", vid)
    in_vpc = [r for kind in ("subnets", "security_groups") for r in reg[kind] if r.get("vpcId") == vid]
    in_vpc += [r for r in reg["route_tables"] if r.get("vpcId") == vid and
               not any(a.get("main") for a in r.get("associationSet", []))]
    in_vpc += [g for g in reg["internet_gateways"] if any(a["vpcId"] == vid for a in g.get("attachmentSet", []))]
    if in_vpc:
        raise dependency("vpc '%s'" % vid)
    reg["route_tables"] = [r for r in reg["route_tables"] if r.get("vpcId") != vid]  # its main route table
    reg["vpcs"] = [v for v in reg["vpcs"] if v["vpcId"] != vid]


def delete_key_pair(reg, req):
    ident, name = req.scalars.get("KeyPairId"), req.scalars.get("KeyName")
    if not ident and not name:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter KeyName or KeyPairId")
    reg["key_pairs"] = [k for k in reg["key_pairs"] if k["keyPairId"] != ident and k["keyName"] != name]


def delete_placement_group(reg, req):
    name = need(req, "GroupName")
    find_in(reg, "placement_groups", name)
    if any(live(i) and i.get("placement", {}).get("groupName") == name for i in reg["instances"]):
        raise ApiError(400, "InvalidPlacementGroup.InUse", "The placement group '%s' is in use and may not be deleted." % name)
    reg["placement_groups"] = [g for g in reg["placement_groups"] if g["groupName"] != name]


EC2_ACTIONS = {
    "DescribeInstanceTypeOfferings": describe_instance_type_offerings,
    "DescribeImages": describe_images,
    "DescribeInstanceTypes": describe_instance_types,
    "DescribeInstances": describe_instances,
    "TerminateInstances": terminate_instances,
    "RevokeSecurityGroupIngress": changed(revoke_ingress),
    "DeleteSecurityGroup": changed(delete_security_group),
    "DeleteSubnet": changed(delete_subnet),
    "DetachInternetGateway": changed(detach_internet_gateway),
    "DeleteInternetGateway": changed(delete_internet_gateway),
    "DeleteRouteTable": changed(delete_route_table),
    "DeleteVpc": changed(delete_vpc),
    "DeleteKeyPair": changed(delete_key_pair),
    "DeletePlacementGroup": changed(delete_placement_group),
}
EC2_ACTIONS.update({action: describe_region for action in DESCRIBED})


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
            cfg = json.load(f)
        cfg["_resources"] = self.server.resources_path
        return cfg

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
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
