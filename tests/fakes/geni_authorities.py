"""The member and slice authorities of the GENI stand-in (tests/fakes/geni_aggregate.py), the credentials
they issue and the aggregate checks, and the state both keep (slices, slivers).

Follows:
  ProtoGENI's authorities as the Virtual Wall runs them (emulab-devel: protogeni/lib/GeniStdSA.pm.in, GeniSA.pm.in,
    GeniMA.pm.in; protogeni/xmlrpc/GeniResponse.pm, protogeni-wrapper.pl.in): the same calls, answered with
    ProtoGENI's GENIRESPONSE codes and texts (Refused.pg) and the wrapper's protogeni_error_url/_log keys.
  "Federation Service API's", API Version 2 (the Common Federation API v2, GENI-NSF/CommonFederationAPI,
    CommonFederationAPIv2.adoc): "API Error Handling" (return {code, value, output}; codes NONE 0,
    AUTHENTICATION_ERROR 1, AUTHORIZATION_ERROR 2, ARGUMENT_ERROR 3, DUPLICATE_ERROR 5), "Slice Service
    Methods" (create/update/lookup with type "SLICE", SLICE_NAME and SLICE_PROJECT_URN required at creation,
    SLICE_EXPIRATION may only be extended, get_credentials(slice_urn, credentials, options) returns
    CREDENTIALS), and the Member Service's get_credentials(member_urn, credentials, options).
  "GENI Aggregate Manager API Version 3", "API Version 3 Common Concepts, Arguments, and Returns"
    (https://groups.geni.net/geni/wiki/GAPI_AM_API_V3/CommonConcepts): credentials as a list of
    {geni_type, geni_version, geni_value}.
Where the stand-in simplifies, it says so: credentials are SFA-shaped XML (<signed-credential><credential>
owner_urn, target_urn, expires, privileges) whose signature is an HMAC of the stand-in's own, not an
XML-DSig chain; a credential not issued by this stand-in, expired, for another owner or another target is
refused as the API says (AM: FORBIDDEN 3; authorities: AUTHORIZATION_ERROR 2).
"""
import datetime as dt
import hashlib
import hmac
import os
import re
import secrets
import xml.etree.ElementTree as ET
import xmlrpc.client

import geni_nodes

# Common Federation API v2 error codes ("API Error Handling").
NONE, AUTHENTICATION_ERROR, AUTHORIZATION_ERROR, ARGUMENT_ERROR, DUPLICATE_ERROR = 0, 1, 2, 3, 5
NOT_IMPLEMENTED_ERROR = 100
# ProtoGENI's own codes (emulab-devel, protogeni/xmlrpc/GeniResponse.pm, GENIRESPONSE_*), with which its
# Federation-API-style authorities (GeniStdSA, GeniMA) answer untranslated; and the code each Federation API
# refusal here has there, where the call below gives no ProtoGENI answer of its own.
PG_BADARGS, PG_ERROR, PG_FORBIDDEN, PG_SEARCHFAILED, PG_NOT_IMPLEMENTED = 1, 2, 3, 12, 100
PG_OF_FED = {AUTHENTICATION_ERROR: PG_FORBIDDEN, AUTHORIZATION_ERROR: PG_FORBIDDEN, ARGUMENT_ERROR: PG_BADARGS,
             DUPLICATE_ERROR: PG_ERROR, NOT_IMPLEMENTED_ERROR: PG_NOT_IMPLEMENTED}

SLICE_NAME = re.compile(r"[a-zA-Z0-9][-a-zA-Z0-9]{0,18}")
USER_URN = re.compile(r"urn:publicid:IDN\+([A-Za-z0-9.\-:_]+)\+user\+([A-Za-z0-9._\-]+)")
SLICE_URN = re.compile(r"urn:publicid:IDN\+([A-Za-z0-9.\-_]+):([A-Za-z0-9\-_]+)\+slice\+(.+)")
PROJECT_URN = re.compile(r"urn:publicid:IDN\+([A-Za-z0-9.\-_]+)\+project\+([A-Za-z0-9\-_]+)")
ALLOCATE_LEASE = dt.timedelta(minutes=10)
SLICE_DEFAULT = dt.timedelta(hours=2)
SLICE_MAX = dt.timedelta(days=14)
# GeniSA's RenewSlice/RegisterInternal text for a lifetime past the authority's maximum (sic).
TOO_LONG = f"expiration is greater then the maximum number of minutes {int(SLICE_MAX.total_seconds() // 60)}"
KEY = secrets.token_bytes(32)


def now():
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def rfc3339(t):
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text):
    if isinstance(text, xmlrpc.client.DateTime):
        text = text.value
    text = str(text)
    for fmt in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S%z", "%Y%m%dT%H:%M:%S"):
        try:
            t = dt.datetime.strptime(text, fmt)
            return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)
        except ValueError:
            pass
    raise ValueError(f"{text!r} is not an RFC 3339 time")


class Refused(Exception):
    """A refused call: its code and output, and (pg) the (code, output) a ProtoGENI authority answers."""

    def __init__(self, code, output, pg=None):
        super().__init__(output)
        self.code, self.output = code, output
        self.pg = pg or (PG_OF_FED.get(code, PG_ERROR), output)


# --- credentials -----------------------------------------------------------------------------------------

def _sign(owner, target, expires):
    return hmac.new(KEY, f"{owner}|{target}|{expires}".encode(), hashlib.sha256).hexdigest()


def issue(owner, target, expires):
    cred = (f'<?xml version="1.0"?><signed-credential><credential xml:id="ref0"><type>privilege</type>'
            f'<owner_urn>{owner}</owner_urn><target_urn>{target}</target_urn><expires>{rfc3339(expires)}</expires>'
            f'<privileges><privilege><name>*</name><can_delegate>false</can_delegate></privilege></privileges>'
            f'</credential><signatures><Signature>{_sign(owner, target, rfc3339(expires))}</Signature>'
            f'</signatures></signed-credential>')
    return {"geni_type": "geni_sfa", "geni_version": "3", "geni_value": cred}


def verified(credentials, caller, target):
    """The expiry of a valid credential of `caller` for `target` in the list, or a reason it has none."""
    if not isinstance(credentials, list):
        return None, "credentials must be a list"
    reasons = []
    for c in credentials:
        if not isinstance(c, dict) or c.get("geni_type") != "geni_sfa" or str(c.get("geni_version")) != "3":
            reasons.append("not a geni_sfa version 3 credential")
            continue
        try:
            root = ET.fromstring(c.get("geni_value", ""))
            body = root.find("credential")
            owner, tgt, exp = (body.findtext("owner_urn"), body.findtext("target_urn"), body.findtext("expires"))
            sig = root.findtext("signatures/Signature")
        except (ET.ParseError, AttributeError):
            reasons.append("a credential that is not SFA XML")
            continue
        if not sig or not hmac.compare_digest(sig, _sign(owner, tgt, exp)):
            reasons.append("a credential not signed by a trusted authority")
        elif owner != caller:
            reasons.append(f"a credential of {owner}, not of the caller {caller}")
        elif tgt != target:
            reasons.append(f"a credential for {tgt}, not {target}")
        elif parse_time(exp) <= now():
            reasons.append(f"a credential that expired at {exp}")
        else:
            return parse_time(exp), None
    return None, "; ".join(reasons) or "no credential given"


# --- state -----------------------------------------------------------------------------------------------

class World:
    def __init__(self, state_dir, projects, log_path):
        self.state_dir, self.projects, self.log_path = state_dir, projects, log_path
        self.slices = {}   # slice urn -> {name, project_urn, owner, expiration, created}
        self.slivers = {}  # slice urn -> {names, authority, slivers: [{urn, client_id, alloc, op, expires}], nodes, id}

    def log(self, line):
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(line + "\n")

    def expire(self):
        t = now()
        for urn, rec in list(self.slivers.items()):
            if any(s["expires"] <= t for s in rec["slivers"]) or self.slices[urn]["expiration"] <= t:
                self.drop(urn)

    def drop(self, urn):
        rec = self.slivers.pop(urn, None)
        if rec and rec.get("nodes") is not None:
            geni_nodes.remove_nodes(os.path.join(self.state_dir, "nodes"), rec["id"])

    def live_slice(self, urn):
        s = self.slices.get(urn)
        return s if s and s["expiration"] > now() else None


# --- member and slice authorities --------------------------------------------------------------------------

def user_cred_expiry(world, caller):
    return now() + dt.timedelta(days=30)


def ma_call(world, caller, method, params):
    if method == "get_credentials":
        member_urn, credentials, options = params
        if member_urn != caller:
            raise Refused(AUTHORIZATION_ERROR, f"{caller} may not get the credentials of {member_urn}")
        return [issue(caller, caller, user_cred_expiry(world, caller))]
    if method == "get_version":
        return {"VERSION": "2", "SERVICES": ["MEMBER"], "CREDENTIAL_TYPES": [{"type": "geni_sfa", "version": "3"}]}
    raise Refused(NOT_IMPLEMENTED_ERROR, f"{method} is not implemented by this member authority stand-in")


def need_user_cred(credentials, caller):
    _, why = verified(credentials, caller, caller)
    if why:
        raise Refused(AUTHORIZATION_ERROR, f"no valid user credential: {why}")


def slice_fields(urn, s):
    return {"SLICE_URN": urn, "SLICE_NAME": s["name"], "SLICE_PROJECT_URN": s["project_urn"],
            "SLICE_EXPIRATION": rfc3339(s["expiration"]), "SLICE_EXPIRED": s["expiration"] <= now(),
            "SLICE_CREATION": rfc3339(s["created"])}


def sa_call(world, caller, authority, method, params):
    if method == "get_version":
        return {"VERSION": "2", "SERVICES": ["SLICE"], "CREDENTIAL_TYPES": [{"type": "geni_sfa", "version": "3"}]}
    if method == "create":
        kind, credentials, options = params
        if kind != "SLICE":
            raise Refused(NOT_IMPLEMENTED_ERROR, f"create of {kind} is not implemented by this stand-in")
        need_user_cred(credentials, caller)
        fields = (options or {}).get("fields", {})
        name, project_urn = fields.get("SLICE_NAME"), fields.get("SLICE_PROJECT_URN")
        if not name or not project_urn:
            raise Refused(ARGUMENT_ERROR, "SLICE_NAME and SLICE_PROJECT_URN are required at creation")
        if not SLICE_NAME.fullmatch(name):
            raise Refused(ARGUMENT_ERROR, f"slice name {name!r}: at most 19 letters, digits or '-', no leading '-'")
        m = PROJECT_URN.fullmatch(project_urn)
        if not m or m.group(1) != authority:
            raise Refused(ARGUMENT_ERROR, f"{project_urn!r} is not a project of authority {authority}")
        if m.group(2) not in world.projects:
            raise Refused(AUTHORIZATION_ERROR, f"{caller} is not a member of project {m.group(2)}",
                          pg=(PG_FORBIDDEN, f"No privilege for project {m.group(2)}"))
        urn = f"urn:publicid:IDN+{authority}:{m.group(2)}+slice+{name}"
        if world.live_slice(urn):
            raise Refused(DUPLICATE_ERROR, f"slice {urn} already exists",
                          pg=(PG_ERROR, f"{urn} already a registered slice"))  # GeniSA::RegisterInternal
        expiration = now() + SLICE_DEFAULT
        if "SLICE_EXPIRATION" in fields:
            expiration = parse_time(fields["SLICE_EXPIRATION"])
            if expiration <= now() or expiration > now() + SLICE_MAX:
                raise Refused(ARGUMENT_ERROR, f"SLICE_EXPIRATION {fields['SLICE_EXPIRATION']} is outside "
                                              f"now .. now + {SLICE_MAX.days} days",
                              pg=(PG_ERROR, "such a short life for a slice? More time please."
                                  if expiration <= now() else TOO_LONG))
        world.slices[urn] = {"name": name, "project_urn": project_urn, "owner": caller,
                             "expiration": expiration, "created": now()}
        world.log(f"SA create {urn}")
        return slice_fields(urn, world.slices[urn])
    if method == "lookup":
        kind, credentials, options = params
        if kind != "SLICE":
            raise Refused(NOT_IMPLEMENTED_ERROR, f"lookup of {kind} is not implemented by this stand-in")
        need_user_cred(credentials, caller)
        match = (options or {}).get("match", {})
        want = match.get("SLICE_URN")
        want = [want] if isinstance(want, str) else want
        out = {}
        for urn, s in world.slices.items():
            if want is not None and urn not in want:
                continue
            if "SLICE_EXPIRED" in match and (s["expiration"] <= now()) != bool(match["SLICE_EXPIRED"]):
                continue
            if s["owner"] == caller:
                out[urn] = slice_fields(urn, s)
        return out
    if method == "update":
        kind, urn, credentials, options = params
        if kind != "SLICE":
            raise Refused(NOT_IMPLEMENTED_ERROR, f"update of {kind} is not implemented by this stand-in")
        # The slice's own credential, as the reference slice authority takes it (ProtoGENI's GeniStdSA
        # `update` checks the caller's privilege on the slice; a user credential is "Insufficient
        # privilege"; omni's renew_slice passes the slice credential).
        s = world.live_slice(urn)
        if not s or s["owner"] != caller:
            raise Refused(ARGUMENT_ERROR, f"unknown slice urn {urn}", pg=(PG_SEARCHFAILED, f"No such slice here: {urn}"))
        _, why = verified(credentials, caller, urn)
        if why:
            raise Refused(AUTHORIZATION_ERROR, f"Insufficient privilege: update of {urn} needs its slice credential ({why})")
        fields = (options or {}).get("fields", {})
        if set(fields) - {"SLICE_EXPIRATION", "SLICE_DESCRIPTION"}:
            raise Refused(ARGUMENT_ERROR, f"fields {sorted(set(fields))} cannot be updated")
        if "SLICE_EXPIRATION" in fields:
            t = parse_time(fields["SLICE_EXPIRATION"])
            if t < s["expiration"]:
                raise Refused(ARGUMENT_ERROR, "a slice's expiration may only be extended, never reduced",
                              pg=(PG_ERROR, "Cannot shorten slice lifetime"))
            if t > s["created"] + SLICE_MAX:
                raise Refused(ARGUMENT_ERROR, f"at most {SLICE_MAX.days} days after the slice's creation",
                              pg=(PG_ERROR, TOO_LONG))
            s["expiration"] = t
            world.log(f"SA update {urn} {rfc3339(t)}")
        return None
    if method == "get_credentials":
        urn, credentials, options = params
        need_user_cred(credentials, caller)
        s = world.live_slice(urn)
        if not s:
            raise Refused(ARGUMENT_ERROR, f"unknown slice urn {urn} (never created, or expired)",
                          pg=(PG_SEARCHFAILED, "No such Slice"))
        if s["owner"] != caller:
            raise Refused(AUTHORIZATION_ERROR, f"{caller} is not a member of slice {urn}", pg=(PG_FORBIDDEN, "Not your slice!"))
        return [issue(caller, urn, s["expiration"])]
    raise Refused(NOT_IMPLEMENTED_ERROR, f"{method} is not implemented by this slice authority stand-in")


