"""How ddl-idle ends an OpenStack cluster from its master (autostop.node_credential; docs/security.md,
"Nodes hold no cloud credential"). python3 standard library only: nodes have no openstacksdk.

ddl-idle imports this file (DDL_CLOUD=openstack in /etc/ddl/cloud.env) and calls end(env, action, line) once
the cluster has been idle for autostop.idle_minutes. ENV is cloud.env's settings:
  OS_AUTH_URL                        Keystone's v3 endpoint (the clouds.yaml auth_url)
  OS_APPLICATION_CREDENTIAL_ID       the node credential (the module's credential.tf)
  OS_APPLICATION_CREDENTIAL_SECRET
  OS_REGION_NAME, OS_INTERFACE       which compute endpoint of the catalog (default: any region, public)
  DDL_CLOUD_SERVERS                  the cluster's server ids, comma-separated, the master's last
  DDL_CLOUD_CA                       the CA bundle to verify the cloud's TLS with (else the system's)
The credential's access rules let it do exactly what end() does: POST .../servers/<id>/action and
DELETE .../servers/<id> on this cluster's servers, PUT .../servers/<master>/metadata/ddl_autostop.

Follows: "Identity API v3" https://docs.openstack.org/api-ref/identity/v3/ , "Authenticating with an
Application Credential" (POST /v3/auth/tokens, the token in X-Subject-Token, the catalog in the body);
"Compute API" https://docs.openstack.org/api-ref/compute/ , "Create Or Update Metadata Item" (PUT
/servers/{server_id}/metadata/{key}), "Stop Server (os-stop Action)" (POST /servers/{server_id}/action,
202), "Delete Server" (DELETE /servers/{server_id}, 204).
"""
import json
import ssl
import urllib.error
import urllib.request

# Nova's limit on a metadata value (the API schema's maxLength).
METADATA_VALUE_MAX = 255
TIMEOUT_S = 30


def _context(env):
    ca = env.get("DDL_CLOUD_CA", "")
    return ssl.create_default_context(cafile=ca) if ca else ssl.create_default_context()


def _request(ctx, method, url, body=None, token=None):
    """(status, headers, parsed body or None); an error status raises RuntimeError naming the call and the
    service's message (never a secret: the request body is not quoted)."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["X-Auth-Token"] = token
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=TIMEOUT_S) as r:
            text = r.read()
            return r.status, r.headers, json.loads(text) if text.strip() else None
    except urllib.error.HTTPError as e:
        raise RuntimeError("%s %s: HTTP %d %s" % (method, url, e.code, _message(e.read()))) from None
    except (urllib.error.URLError, OSError) as e:
        raise RuntimeError("%s %s: %s" % (method, url, getattr(e, "reason", e))) from None


def _message(raw):
    """The message of an OpenStack error body ({"error": {...}}, {faultName: {...}}), else the text."""
    try:
        body = json.loads(raw)
        inner = next(iter(body.values())) if isinstance(body, dict) and len(body) == 1 else body
        if isinstance(inner, dict) and "message" in inner:
            return str(inner["message"])
    except (ValueError, StopIteration):
        pass
    return raw.decode("utf-8", "replace")[:300]


def authenticate(ctx, env):
    """(token, compute endpoint URL): the application credential's token and the catalog's compute endpoint
    of OS_INTERFACE (default public) in OS_REGION_NAME (any region when unset)."""
    auth_url = env["OS_AUTH_URL"].rstrip("/")
    if not auth_url.endswith("/v3"):
        auth_url += "/v3"
    body = {"auth": {"identity": {"methods": ["application_credential"], "application_credential": {
        "id": env["OS_APPLICATION_CREDENTIAL_ID"], "secret": env["OS_APPLICATION_CREDENTIAL_SECRET"]}}}}
    _, headers, reply = _request(ctx, "POST", auth_url + "/auth/tokens", body)
    token = headers.get("X-Subject-Token")
    if not token:
        raise RuntimeError("POST %s/auth/tokens: no X-Subject-Token in Keystone's answer" % auth_url)
    interface = env.get("OS_INTERFACE", "") or "public"
    if interface.endswith("URL"):
        interface = interface[:-3]  # publicURL, internalURL: the v2 names clouds.yaml still accepts
    region = env.get("OS_REGION_NAME", "")
    for service in (reply or {}).get("token", {}).get("catalog", []):
        if service.get("type") != "compute":
            continue
        for ep in service.get("endpoints", []):
            if ep.get("interface") == interface and (not region or region in (ep.get("region_id"), ep.get("region"))):
                return token, ep["url"].rstrip("/")
    raise RuntimeError("the token's catalog has no compute endpoint (interface %s%s)"
                       % (interface, ", region " + region if region else ""))


def end(env, action, line):
    """Records LINE on the master (metadata ddl_autostop, cut to Nova's 255), then stops (os-stop) or deletes
    every server of DDL_CLOUD_SERVERS, the master's last; returns how, for ddl-idle's record. A server already
    gone (404) or already stopped (409 on os-stop of a SHUTOFF server) counts as done, so a tick that failed
    half way may run it again."""
    if action not in ("stop", "destroy"):
        raise ValueError("action must be stop or destroy, not %r" % action)
    servers = [s for s in env.get("DDL_CLOUD_SERVERS", "").split(",") if s]
    if not servers:
        raise RuntimeError("DDL_CLOUD_SERVERS names no server")
    ctx = _context(env)
    token, compute = authenticate(ctx, env)
    master = servers[-1]
    try:
        _request(ctx, "PUT", "%s/servers/%s/metadata/ddl_autostop" % (compute, master),
                 {"meta": {"ddl_autostop": line[:METADATA_VALUE_MAX]}}, token)
    except RuntimeError as e:
        if "HTTP 404" not in str(e):
            raise
    try:
        for server in servers:
            try:
                if action == "stop":
                    _request(ctx, "POST", "%s/servers/%s/action" % (compute, server), {"os-stop": None}, token)
                else:
                    _request(ctx, "DELETE", "%s/servers/%s" % (compute, server), None, token)
            except RuntimeError as e:
                done = "HTTP 404" in str(e) or (action == "stop" and "HTTP 409" in str(e) and "vm_state stopped" in str(e))
                if not done:
                    raise
    except Exception:
        # Taken back: a line left behind would make a later stop by someone else read as the clock's end.
        try:
            _request(ctx, "PUT", "%s/servers/%s/metadata/ddl_autostop" % (compute, master),
                     {"meta": {"ddl_autostop": ""}}, token)
        except Exception:  # noqa: BLE001 - the first failure is the one to report
            pass
        raise
    verb = "os-stop" if action == "stop" else "DELETE"
    return "Nova %s %s (application credential %s)" % (verb, ",".join(servers), env["OS_APPLICATION_CREDENTIAL_ID"])
