"""ddl_idle_aws: how the master's idle clock (ddl-idle, DDL_IDLE_END=cloud) ends an AWS cluster with the
master's instance profile (autostop.node_credential; docs/security.md). python3's standard library only:
the nodes have no AWS SDK.

Follows:
  - Amazon EC2 User Guide, "Use the Instance Metadata Service to access instance metadata", section
    "Use IMDSv2" (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-instance-metadata-service.html):
    PUT http://169.254.169.254/latest/api/token with X-aws-ec2-metadata-token-ttl-seconds, then every GET with
    the token in X-aws-ec2-metadata-token.
  - Same guide, "Retrieve security credentials from instance metadata"
    (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instance-metadata-security-credentials.html):
    GET /latest/meta-data/iam/security-credentials/ names the role; .../<role> is JSON with Code ("Success"),
    AccessKeyId, SecretAccessKey, Token, Expiration.
  - AWS SDKs and Tools Reference Guide, "IMDS credential provider": AWS_EC2_METADATA_SERVICE_ENDPOINT overrides
    the endpoint; "Service-specific endpoints": AWS_ENDPOINT_URL_EC2.
  - IAM User Guide, "Create a signed AWS API request" (Signature Version 4;
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html), with the
    session token in X-Amz-Security-Token.
  - Amazon EC2 API Reference, "Query requests for Amazon EC2" (POST, Action, Version 2016-11-15),
    API_CreateTags (ResourceId.N, Tag.N.Key, Tag.N.Value; a tag value is at most 256 characters),
    API_StopInstances and API_TerminateInstances (InstanceId.N), "Error codes for the Amazon EC2 API"
    (<Response><Errors><Error><Code/><Message/>).

The environment (env, from /etc/ddl/cloud.env, written by configure from AwsTarget::node_credential):
  AWS_REGION             the cluster's region
  AWS_ENDPOINT_URL_EC2   the EC2 endpoint the controller used (empty: https://ec2.<region>.amazonaws.com)
  DDL_CLOUD_SERVERS      the cluster's instance ids, comma-separated, the workers first and the master last
  DDL_CLOUD_CA           a CA bundle for the endpoint (empty: the system's)
"""
import datetime
import hashlib
import hmac
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request

IMDS = "http://169.254.169.254"
EC2_VERSION = "2016-11-15"
TAG_KEY = "ddl-autostop"
TAG_VALUE_MAX = 256
TIMEOUT = 20


# ---- Signature Version 4 ------------------------------------------------------------------------------

def _quote(text):
    return urllib.parse.quote(text, safe="-_.~")


def canonical_query(query):
    pairs = sorted((_quote(urllib.parse.unquote(n)), _quote(urllib.parse.unquote(v)))
                   for n, _, v in (p.partition("=") for p in query.split("&") if p))
    return "&".join("%s=%s" % p for p in pairs)


def sign(method, url, headers, body, key, secret, token, region, service, amz_date):
    """The headers of a SigV4-signed request: HEADERS (lowercase names) plus host, x-amz-date,
    x-amz-security-token (with TOKEN) and authorization. AMZ_DATE: YYYYMMDDTHHMMSSZ."""
    parts = urllib.parse.urlsplit(url)
    out = dict(headers, **{"host": parts.netloc, "x-amz-date": amz_date})
    if token:
        out["x-amz-security-token"] = token
    names = sorted(out)
    canonical = "\n".join([method, urllib.parse.quote(parts.path or "/", safe="/-_.~"), canonical_query(parts.query)]
                          + ["%s:%s" % (n, " ".join(str(out[n]).split())) for n in names]
                          + ["", ";".join(names), hashlib.sha256(body).hexdigest()])
    scope = "%s/%s/%s/aws4_request" % (amz_date[:8], region, service)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (amz_date[:8], region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    out["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        key, scope, ";".join(names), signature)
    return out


# ---- IMDSv2 -------------------------------------------------------------------------------------------

def _imds(endpoint, method, path, headers):
    req = urllib.request.Request(endpoint.rstrip("/") + path, method=method, headers=headers,
                                 data=b"" if method == "PUT" else None)
    # The metadata service is a link-local address of the instance itself: never through a proxy.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=TIMEOUT) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        raise RuntimeError("instance metadata %s %s: HTTP %d" % (method, path, e.code)) from None
    except (urllib.error.URLError, OSError) as e:
        raise RuntimeError("instance metadata at %s cannot be reached: %s" % (endpoint, getattr(e, "reason", e))) from None


def instance_credentials(env):
    """The instance profile's temporary credentials from IMDSv2: (role, key, secret, token)."""
    endpoint = env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT") or IMDS
    token = _imds(endpoint, "PUT", "/latest/api/token", {"X-aws-ec2-metadata-token-ttl-seconds": "300"})
    auth = {"X-aws-ec2-metadata-token": token}
    roles = _imds(endpoint, "GET", "/latest/meta-data/iam/security-credentials/", auth).split()
    if not roles:
        raise RuntimeError("the instance has no instance profile (instance metadata lists no role)")
    creds = json.loads(_imds(endpoint, "GET", "/latest/meta-data/iam/security-credentials/" + roles[0], auth))
    if creds.get("Code") != "Success":
        raise RuntimeError("instance metadata gives no credentials for role %s: %s" % (roles[0], creds.get("Code")))
    return roles[0], creds["AccessKeyId"], creds["SecretAccessKey"], creds["Token"]


# ---- EC2 ----------------------------------------------------------------------------------------------

def ec2_call(env, creds, params, now=None):
    """One signed EC2 Query request (POST, form body); returns the response text, raises RuntimeError with
    EC2's error code and message."""
    region = env.get("AWS_REGION", "")
    if not region:
        raise RuntimeError("AWS_REGION is not set in the cloud environment")
    endpoint = (env.get("AWS_ENDPOINT_URL_EC2") or "https://ec2.%s.amazonaws.com" % region).rstrip("/") + "/"
    body = urllib.parse.urlencode([("Action", params[0][1]), ("Version", EC2_VERSION)] + params[1:],
                                  quote_via=urllib.parse.quote).encode()
    when = now or datetime.datetime.now(datetime.timezone.utc)
    headers = sign("POST", endpoint, {"content-type": "application/x-www-form-urlencoded; charset=utf-8"}, body,
                   creds[1], creds[2], creds[3], region, "ec2", when.strftime("%Y%m%dT%H%M%SZ"))
    headers.pop("host")
    ctx = ssl.create_default_context(cafile=env.get("DDL_CLOUD_CA") or None)
    req = urllib.request.Request(endpoint, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=TIMEOUT) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8", "replace")
        code = _element(text, "Code") or "HTTP %d" % e.code
        raise RuntimeError("EC2 %s: %s: %s" % (params[0][1], code, _element(text, "Message"))) from None
    except (urllib.error.URLError, OSError) as e:
        raise RuntimeError("EC2 endpoint %s cannot be reached: %s" % (endpoint, getattr(e, "reason", e))) from None


def _element(text, name):
    start = text.find("<%s>" % name)
    end = text.find("</%s>" % name, start)
    return text[start + len(name) + 2:end] if start >= 0 and end > start else ""


def instance_ids(env):
    ids = [i.strip() for i in env.get("DDL_CLOUD_SERVERS", "").split(",") if i.strip()]
    if not ids:
        raise RuntimeError("DDL_CLOUD_SERVERS names no instance")
    return ids


def end(env, action, line):
    """Records LINE on the master (tag ddl-autostop), then stops or terminates (ACTION "stop" / "destroy")
    the workers, then the master. Returns how, for the clock's record."""
    if action not in ("stop", "destroy"):
        raise RuntimeError("unknown autostop action %r" % action)
    ids = instance_ids(env)
    creds = instance_credentials(env)
    master, workers = ids[-1], ids[:-1]
    ec2_call(env, creds, [("Action", "CreateTags"), ("ResourceId.1", master), ("Tag.1.Key", TAG_KEY),
                          ("Tag.1.Value", line[:TAG_VALUE_MAX])])
    verb = "StopInstances" if action == "stop" else "TerminateInstances"
    try:
        for group in (workers, [master]):
            if group:
                ec2_call(env, creds, [("Action", verb)] + [("InstanceId.%d" % (n + 1), i) for n, i in enumerate(group)])
    except Exception:
        # Taken back: a tag left behind would make a later stop by someone else read as the clock's end.
        try:
            ec2_call(env, creds, [("Action", "CreateTags"), ("ResourceId.1", master), ("Tag.1.Key", TAG_KEY),
                                  ("Tag.1.Value", "")])
        except Exception:  # noqa: BLE001 - the first failure is the one to report
            pass
        raise
    return "EC2 %s %s (instance profile role %s)" % (verb, ",".join(ids), creds[0])
