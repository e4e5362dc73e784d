#!/usr/bin/env python3
"""Stand-in for a Virtual Wall aggregate (GENI AM API v3) with its member and slice authorities (Common
Federation API v2), over XML-RPC on HTTPS with client certificates.

Follows:
- "GENI Aggregate Manager API Version 3", https://groups.geni.net/geni/wiki/GAPI_AM_API_V3, with
  "API Version 3 Common Concepts, Arguments, and Returns" (https://groups.geni.net/geni/wiki/GAPI_AM_API_V3/CommonConcepts:
  XML-RPC over SSL with client certificates; the return struct {code: {geni_code, am_type}, value, output};
  the error code table; credentials as a list of {geni_type, geni_version, geni_value}; sliver allocation
  states geni_unallocated / geni_allocated / geni_provisioned; operational states geni_pending_allocation,
  geni_notready, geni_configuring, geni_ready, geni_failed; geni_expires per sliver) and "API Version 3
  Details" (https://groups.geni.net/geni/wiki/GAPI_AM_API_V3_DETAILS: GetVersion, Allocate(slice_urn,
  credentials, rspec, options), Provision(urns, credentials, options) with the required geni_rspec_version and
  geni_users, PerformOperationalAction(urns, credentials, action, options) with geni_start, Status, Describe,
  Renew(urns, credentials, expiration_time, options) — which may not go past the slice credential's expiry —
  and Delete).
- "Federation Service API's", API Version 2 (the Common Federation API v2, GENI-NSF/CommonFederationAPI,
  CommonFederationAPIv2.adoc): "API Error Handling" (return {code, value, output}; codes NONE 0,
  AUTHENTICATION_ERROR 1, AUTHORIZATION_ERROR 2, ARGUMENT_ERROR 3, DUPLICATE_ERROR 5), "Slice Service
  Methods" (create/update/lookup with type "SLICE", SLICE_NAME and SLICE_PROJECT_URN required at creation,
  SLICE_EXPIRATION may only be extended, get_credentials(slice_urn, credentials, options) returns
  CREDENTIALS), and the Member Service's get_credentials(member_urn, credentials, options).
- "GENI Certificates", https://groups.geni.net/geni/wiki/GeniApiCertificates: the caller's URN
  urn:publicid:IDN+AUTHORITY+user+NAME is in the certificate's subjectAltName.

Paths: /ma/2 (member authority), /sa/2 (slice authority), /am/3.0 (aggregate); and the Virtual Wall's
ProtoGENI authorities, /protogeni/xmlrpc/geni-ma and /protogeni/xmlrpc/geni-sa/2, whose answers carry
ProtoGENI's codes and texts and the wrapper's protogeni_error_url/_log (geni_authorities.py). The TLS server requires a
client certificate signed by the test CA (--ca) and takes the caller's identity from its URN.

Where the stand-in simplifies, it says so: credentials are SFA-shaped XML (<signed-credential><credential>
owner_urn, target_urn, expires, privileges) whose signature is an HMAC of the stand-in's own, not an
XML-DSig chain; a credential not issued by this stand-in, expired, for another owner or another target is
refused as the API says (AM: FORBIDDEN 3; authorities: AUTHORIZATION_ERROR 2). A provisioned sliver is
geni_notready until geni_start, then geni_configuring for one Status call, then geni_ready. Allocated
slivers expire after 10 minutes unless provisioned (the reference aggregate's policy, gcf am3.py).

Nodes are real local nodes made with $DDL_FAKE_NODES (tests/fakes/geni_nodes.py, shared with the jFed CLI
stand-in) at Provision, admitting the keys of geni_users; Delete and expiry remove them.

Split by job: this file (the aggregate, AM API v3, and the HTTPS transport) and geni_authorities.py (the
member and slice authorities, the credentials, the slices' state).

Usage: geni_aggregate.py --port-file F --cert server.pem --key server.key --ca ca.pem --state DIR
  [--projects p1,p2] [--log FILE] [--busy-after-start: the first Status call after each geni_start is
  answered HTTP 503, a fault planted for the tests]. Environment: DDL_FAKE_NODES. Python 3 standard library only.
"""
import argparse
import http.server
import os
import re
import secrets
import ssl
import sys
import xmlrpc.client

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import geni_nodes  # noqa: E402
from geni_authorities import (ALLOCATE_LEASE, AUTHENTICATION_ERROR, NONE, SLICE_URN, USER_URN, Refused,  # noqa: E402
                              World, ma_call, now, parse_time, rfc3339, sa_call, verified)

# AM API v3 error codes (Common Concepts, "Error Codes").
SUCCESS, BADARGS, ERROR, FORBIDDEN, BADVERSION = 0, 1, 2, 3, 4
SEARCHFAILED, UNSUPPORTED, EXPIRED, ALREADYEXISTS, OUTOFRANGE = 12, 13, 15, 17, 19


# --- aggregate ---------------------------------------------------------------------------------------------

def sliver_status(s):
    return {"geni_sliver_urn": s["urn"], "geni_allocation_status": s["alloc"],
            "geni_operational_status": s["op"], "geni_expires": rfc3339(s["expires"]), "geni_error": ""}


def check_rspec_version(options):
    v = (options or {}).get("geni_rspec_version")
    if not isinstance(v, dict) or "type" not in v or "version" not in v:
        raise Refused(BADARGS, "geni_rspec_version (with type and version) is required")
    if str(v["type"]).lower() != "geni" or str(v["version"]) != "3":
        raise Refused(BADVERSION, f"RSpec version {v['type']} {v['version']} is not supported (GENI 3)")


def am_call(world, caller, url, method, params):
    world.expire()
    if method == "GetVersion":
        return {"geni_api": 3, "geni_api_versions": {"3": url},
                "geni_request_rspec_versions": [{"type": "GENI", "version": "3",
                                                 "schema": "http://www.geni.net/resources/rspec/3/request.xsd",
                                                 "namespace": geni_nodes.GENI, "extensions": []}],
                "geni_ad_rspec_versions": [{"type": "GENI", "version": "3",
                                            "schema": "http://www.geni.net/resources/rspec/3/ad.xsd",
                                            "namespace": geni_nodes.GENI, "extensions": []}],
                "geni_credential_types": [{"geni_type": "geni_sfa", "geni_version": "3"}],
                "geni_single_allocation": False, "geni_allocate": "geni_many"}
    if method == "Allocate":
        slice_urn, credentials, rspec, options = params
        urns = [slice_urn]
    else:
        urns, credentials = params[0], params[1]
        if not isinstance(urns, list) or len(urns) != 1:
            raise Refused(BADARGS, "this stand-in takes exactly one slice URN in urns")
        slice_urn = urns[0]
    if not SLICE_URN.fullmatch(str(slice_urn)):
        raise Refused(BADARGS, f"{slice_urn!r} is not a slice URN")
    cred_expiry, why = verified(credentials, caller, slice_urn)
    if why:
        raise Refused(FORBIDDEN, f"Operation Forbidden: no valid slice credential for {slice_urn}: {why}")
    if not world.live_slice(slice_urn):
        raise Refused(EXPIRED if slice_urn in world.slices else SEARCHFAILED, f"slice {slice_urn} is not live")
    rec = world.slivers.get(slice_urn)
    world.log(f"AM {method} {slice_urn}")

    if method == "Allocate":
        if rec:
            raise Refused(ALREADYEXISTS, f"slice {slice_urn} already has slivers here")
        try:
            authority, names = geni_nodes.parse_request(rspec, "request RSpec")
        except geni_nodes.RspecError as e:
            raise Refused(BADARGS, str(e))
        domain = authority.split("+")[1]
        expires = min(now() + ALLOCATE_LEASE, cred_expiry)
        slivers = [{"urn": f"urn:publicid:IDN+{domain}+sliver+{secrets.token_hex(4)}", "client_id": n,
                    "alloc": "geni_allocated", "op": "geni_pending_allocation", "expires": expires} for n in names]
        world.slivers[slice_urn] = {"names": names, "authority": authority, "slivers": slivers, "nodes": None,
                                    "id": "geni-" + re.sub(r"[^a-zA-Z0-9]", "-", slice_urn.split("+")[1]) + "-" +
                                          slice_urn.split("+")[-1]}
        return {"geni_rspec": rspec, "geni_slivers": [sliver_status(s) for s in slivers]}
    if not rec:
        if method == "Describe":
            return {"geni_rspec": "", "geni_urn": slice_urn, "geni_slivers": []}
        raise Refused(SEARCHFAILED, f"Search Failed: no slivers of slice {slice_urn} here")
    slivers = rec["slivers"]
    if method == "Provision":
        options = params[2]
        check_rspec_version(options)
        if any(s["alloc"] != "geni_allocated" for s in slivers):
            raise Refused(UNSUPPORTED, "Provision: the slivers are not geni_allocated")
        keys = [k for u in (options.get("geni_users") or []) for k in (u.get("keys") or [])]
        keyfile = os.path.join(world.state_dir, rec["id"] + ".keys")
        with open(keyfile, "w", encoding="utf-8") as f:
            f.write("".join(k.strip() + "\n" for k in keys))
        try:
            rec["nodes"] = geni_nodes.make_nodes(os.path.join(world.state_dir, "nodes"), rec["id"], rec["names"],
                                                 keyfile)
        except geni_nodes.RspecError as e:
            raise Refused(ERROR, str(e))
        for s in slivers:
            s["alloc"], s["op"], s["expires"] = "geni_provisioned", "geni_notready", cred_expiry
        return {"geni_rspec": manifest(rec), "geni_slivers": [sliver_status(s) for s in slivers]}
    if method == "PerformOperationalAction":
        action = params[2]
        if action != "geni_start":
            raise Refused(UNSUPPORTED, f"action {action!r} is not supported (geni_start)")
        if any(s["alloc"] != "geni_provisioned" for s in slivers):
            raise Refused(UNSUPPORTED, "geni_start needs provisioned slivers")
        for s in slivers:
            if s["op"] == "geni_notready":
                s["op"] = "geni_configuring"
        return [sliver_status(s) for s in slivers]
    if method == "Status":
        out = {"geni_urn": slice_urn, "geni_slivers": [sliver_status(s) for s in slivers]}
        for s in slivers:  # configuring lasts one Status call
            if s["op"] == "geni_configuring":
                s["op"] = "geni_ready"
        return out
    if method == "Describe":
        check_rspec_version(params[2])
        return {"geni_rspec": manifest(rec) if rec["nodes"] else "", "geni_urn": slice_urn,
                "geni_slivers": [sliver_status(s) for s in slivers]}
    if method == "Renew":
        try:
            want = parse_time(params[2])
        except ValueError as e:
            raise Refused(BADARGS, str(e))
        if want > cred_expiry:
            raise Refused(OUTOFRANGE, f"Out of range: expiration {params[2]} is past the slice credential's "
                                      f"expiration {rfc3339(cred_expiry)}")
        if want < now():
            raise Refused(OUTOFRANGE, f"Out of range: expiration {params[2]} is in the past")
        for s in slivers:
            s["expires"] = want
        return [sliver_status(s) for s in slivers]
    if method == "Delete":
        world.drop(slice_urn)
        for s in slivers:
            s["alloc"], s["op"] = "geni_unallocated", "geni_notready"
        return [sliver_status(s) for s in slivers]
    raise Refused(UNSUPPORTED, f"{method} is not supported by this stand-in")


def manifest(rec):
    return geni_nodes.manifest(rec["names"], rec["nodes"], rec["authority"], "geni_aggregate (ddl test stand-in)",
                               [s["urn"] for s in rec["slivers"]])


# --- transport ---------------------------------------------------------------------------------------------

def caller_urn(cert):
    for kind, value in (cert or {}).get("subjectAltName", ()):
        if kind == "URI" and USER_URN.fullmatch(value):
            return value
    return None


PG_MA, PG_SA = "/protogeni/xmlrpc/geni-ma", "/protogeni/xmlrpc/geni-sa/2"


def make_handler(world):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, body, status=200):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/xml")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            try:
                params, method = xmlrpc.client.loads(body)
            except Exception as e:  # not XML-RPC: the fault an XML-RPC server gives
                self.reply(xmlrpc.client.dumps(xmlrpc.client.Fault(1, f"cannot parse the call: {e}"),
                                               methodresponse=True))
                return
            caller = caller_urn(self.connection.getpeercert())
            path = self.path
            url = f"https://{self.headers.get('Host', '')}{path}"
            # The Federation API's authorities (/ma/2, /sa/2) and ProtoGENI's as the Virtual Wall serves them.
            role = {"/ma/2": "ma", "/sa/2": "sa", PG_MA: "ma", PG_SA: "sa"}.get(path, "am")
            pg = path in (PG_MA, PG_SA)
            fed = role != "am"
            try:
                if path not in ("/sa/2", "/ma/2", "/am/3.0", PG_MA, PG_SA):
                    self.reply("not found", 404)
                    return
                if not caller:
                    raise Refused(AUTHENTICATION_ERROR if fed else FORBIDDEN,
                                  "the client certificate has no GENI user URN in its subjectAltName")
                if path == "/am/3.0" and method == "Status" and world.busy_status:
                    # A planted fault (--busy-after-start): the aggregate's web server is too busy for the
                    # first Status call after a start, as an overloaded server answers (RFC 9110, 503).
                    world.busy_status = False
                    world.log("AM Status busy (503)")
                    self.reply("Service Unavailable", 503)
                    return
                authority = USER_URN.fullmatch(caller).group(1)
                if role == "ma":
                    value = ma_call(world, caller, method, list(params))
                elif role == "sa":
                    value = sa_call(world, caller, authority, method, list(params))
                else:
                    value = am_call(world, caller, url, method, list(params))
                    world.busy_status = world.busy_after_start and method == "PerformOperationalAction"
                result = ({"code": NONE, "value": value, "output": ""} if fed else
                          {"code": {"geni_code": SUCCESS, "am_type": "protogeni", "am_code": 0},
                           "value": value, "output": ""})
                if pg:  # GeniResponse: the value 0 where there is none
                    result = dict(result, value=0 if value is None else value)
            except Refused as r:
                world.log(f"{'PG' if pg else 'FED' if fed else 'AM'} {method} refused {r.pg[0] if pg else r.code}")
                result = ({"code": r.pg[0], "value": 0, "output": r.pg[1]} if pg else
                          {"code": r.code, "value": None, "output": r.output} if fed else
                          {"code": {"geni_code": r.code, "am_type": "protogeni"}, "value": "", "output": r.output})
            except (TypeError, ValueError) as e:  # wrong argument count or type: an XML-RPC fault
                self.reply(xmlrpc.client.dumps(xmlrpc.client.Fault(2, f"{method}: {e}"), methodresponse=True))
                return
            if pg:  # protogeni-wrapper.pl adds the call's log to every answer
                log_id = secrets.token_hex(8)
                result["protogeni_error_log"] = f"urn:publicid:IDN+{self.headers.get('Host', '')}+log+{log_id}"
                result["protogeni_error_url"] = f"https://{self.headers.get('Host', '')}/spewlogfile.php3?logfile={log_id}"
            self.reply(xmlrpc.client.dumps((result,), methodresponse=True, allow_none=True))

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--projects", default="")
    ap.add_argument("--log", default="")
    ap.add_argument("--busy-after-start", action="store_true",
                    help="answer the first Status call after each geni_start with HTTP 503 (a planted fault)")
    a = ap.parse_args()
    os.makedirs(os.path.join(a.state, "nodes"), exist_ok=True)
    world = World(a.state, set(p for p in a.projects.split(",") if p), a.log)
    world.busy_after_start, world.busy_status = a.busy_after_start, False
    server = http.server.HTTPServer(("127.0.0.1", 0), make_handler(world))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ctx.load_verify_locations(a.ca)
    ctx.verify_mode = ssl.CERT_REQUIRED
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(a.port_file + ".tmp", a.port_file)
    try:
        server.serve_forever()
    finally:
        for urn in list(world.slivers):
            world.drop(urn)


if __name__ == "__main__":
    main()
