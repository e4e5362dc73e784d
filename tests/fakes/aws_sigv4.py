"""Signature Version 4 as the AWS API stand-in (tests/fakes/aws_api.py) verifies it, and the errors it answers
with; also the signer of the Terraform stand-in's one signed call (tests/fakes/terraform_aws.py).

Follows:
  - Signature Version 4: "Create a signed AWS API request" and "Elements of an AWS API request signature",
    AWS Identity and Access Management User Guide,
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
    (its GET ListUsers example is the --self-test: canonical request hash f536975d...1a59,
    signature 5d672d79...b5d7).
  - IAM API Reference, "Making query requests": IAM's global endpoint signs with region us-east-1, service iam.
  - "Common Errors" shared by the AWS API references (UnrecognizedClientException 403, ExpiredTokenException 403,
    UnknownOperationException 404, RequestExpired 400), e.g.
    https://docs.aws.amazon.com/awsconsolehelpdocs/latest/gsg/common-errors.html
Where these are silent, the status or wording observed from the real services in public reports
(docs/research/aws-research.md): AuthFailure 401 "AWS was not able to validate the provided access
credentials"; SignatureDoesNotMatch 403.
"""
import datetime
import hashlib
import hmac
import re
import urllib.parse

ALGORITHM = "AWS4-HMAC-SHA256"
MAX_SKEW = 15 * 60


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
    # IAM's one global endpoint takes the scope of us-east-1 (IAM API Reference, "Making query requests").
    if region != ("us-east-1" if service_protocol == "iam" else cfg["region"]):
        raise ApiError(403, "SignatureDoesNotMatch", "Credential should be scoped to a valid region, not '%s'." % region)
    if service not in ("ec2", "servicequotas", "iam") or (service == "iam") != (service_protocol == "iam"):
        raise ApiError(403, "SignatureDoesNotMatch", "Credential should be scoped to correct service: 'ec2', "
                       "'servicequotas' or 'iam', not '%s' (stand-in: one port serves them all)." % service)
    cred = cfg.get("credentials", {}).get(key)
    token = headers.get("x-amz-security-token", [None])[0]
    bad_client = ApiError(401, "AuthFailure", "AWS was not able to validate the provided access credentials") if ec2 else \
        ApiError(403, "InvalidClientTokenId" if service_protocol == "iam" else "UnrecognizedClientException",
                 "The security token included in the request is invalid.")
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
        err = ApiError(403, "InvalidSignatureException" if service_protocol == "servicequotas" else "SignatureDoesNotMatch",
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
    return parts[3] if len(parts) == 5 and parts[3] in ("servicequotas", "iam") else None
