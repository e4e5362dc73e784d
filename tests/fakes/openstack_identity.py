"""Keystone v3 of the OpenStack API stand-in (tests/fakes/openstack_api.py): tokens, the catalog and
application credentials.

Follows "Identity API v3" https://docs.openstack.org/api-ref/identity/v3/ , sections "Password
authentication with scoped authorization", "... with unscoped authorization", "Authenticating with an
Application Credential", "Authentication and token management" (errors), and "Application Credentials"
(https://docs.openstack.org/api-ref/identity/v3/#application-credentials: POST/GET
/v3/users/{user_id}/application_credentials, GET/DELETE .../{application_credential_id}; the secret shown
only in the create response; expires_at, roles, unrestricted, access_rules). With a registry (--resources)
the credentials live in its "application_credentials" (the Terraform stand-in makes them there too, as the
provider's openstack_identity_application_credential_v3 does through this API); an expired one, or a wrong
secret, is refused with the generic 401. A token from a credential with access rules carries them
("application_credential": {..., "access_rules"}), which openstack_api.py enforces as keystonemiddleware
does. Where the api-ref is thin, read
from keystone's code (exception.py, auth/core.py, auth/plugins/core.py; marked "(code)" in
docs/research/openstack-standin-review.md): the 400 messages, the generic 401 that hides why (no access to
the project, unknown domain), the application-credential scope refusal and its "identity": {} member.
"""
import base64
import datetime
import json
import secrets
import uuid

from openstack_errors import DEFAULT_DOMAIN, Refusal, keystone_missing, timestamp, unauthorized
from openstack_registry import registry

# The roles a user holds on the project here (every token's roles): Keystone's default member and reader.
ROLES = [{"id": "r-member", "name": "member"}, {"id": "r-reader", "name": "reader"}]


class Keystone:
    """The Keystone half of openstack_api.Handler (which provides base())."""

    def catalog(self, cfg, pid):
        def svc(type_, name, url):
            return {"type": type_, "name": name, "id": name,
                    "endpoints": [{"interface": i, "region": cfg.get("region", "RegionOne"),
                                   "region_id": cfg.get("region", "RegionOne"), "url": url, "id": name + i}
                                  for i in ("public", "internal", "admin")]}
        b = self.base()
        cat = [svc("identity", "keystone", b + "/identity/v3"), svc("compute", "nova", b + "/compute/v2.1"),
               svc("image", "glance", b + "/image"), svc("network", "neutron", b + "/network")]
        if cfg.get("volume_limits") is not None:
            cat.append(svc("volumev3", "cinderv3", b + "/volume/v3/" + pid))
        return cat

    @staticmethod
    def domain(ref, target):
        """The domain a {"id"} or {"name"} reference names; 401 when it is not the one domain here."""
        if not isinstance(ref, dict) or ("id" not in ref and "name" not in ref):
            raise keystone_missing("id or name", target)
        if ref.get("id", DEFAULT_DOMAIN["id"]) != DEFAULT_DOMAIN["id"] or \
                ref.get("name", DEFAULT_DOMAIN["name"]) != DEFAULT_DOMAIN["name"]:
            raise unauthorized()  # DomainNotFound becomes a plain 401 (code: auth/core.py)
        return DEFAULT_DOMAIN

    def user(self, cfg, ref):
        """The user name a user reference names: by id, or by name with its domain (required)."""
        if not isinstance(ref, dict):
            raise keystone_missing("id or name", "user")
        users = cfg.get("users", {})
        if "id" in ref:
            name = ref["id"][2:] if str(ref["id"]).startswith("u-") else None
        elif "name" in ref:
            if "domain" not in ref:
                raise keystone_missing("domain", "user")
            self.domain(ref["domain"], "domain")
            name = ref["name"]
        else:
            raise keystone_missing("id or name", "user")
        if name not in users:
            raise unauthorized()
        return name

    def scoped_project(self, cfg, req):
        """The project the request scopes to; None for an unscoped token."""
        project = cfg["project"]
        if "scope" not in req:
            # No scope: the user's default project when it has one, else an unscoped token.
            return project if cfg.get("default_project") == project["id"] else None
        scope = req["scope"]
        kinds = [k for k in ("project", "domain", "OS-TRUST:trust", "system", "unscoped")
                 if isinstance(scope, dict) and k in scope]
        if len(kinds) != 1:
            raise keystone_missing("project, domain, OS-TRUST:trust or unscoped", "scope")
        if kinds[0] == "unscoped":
            return None
        if kinds[0] != "project":
            raise unauthorized()  # the users here hold roles on their project only
        ref = scope["project"]
        if not isinstance(ref, dict):
            raise keystone_missing("id or name", "project")
        if "id" in ref:
            ok = ref["id"] == project["id"]
        elif "name" in ref:
            if "domain" not in ref:
                raise keystone_missing("domain", "project")
            self.domain(ref["domain"], "domain")
            ok = ref["name"] == project["name"]
        else:
            raise keystone_missing("id or name", "project")
        if not ok:
            raise unauthorized()  # "User has no access to project" only with insecure_debug
        return project

    def app_credential(self, cfg, payload):
        """(id, name, owner, the registry's entry or None) of the application credential a request names; the
        secret must match and it must not have expired."""
        stored = self.stored_credential(payload)
        if stored is not None:
            if stored["_secret"] != payload.get("secret") or expired(stored):
                raise unauthorized()
            return stored["id"], stored["name"], stored["_user_id"][2:], stored
        names = cfg.get("app_credential_names", {})
        if "id" in payload:
            cred_id = payload["id"]
            owner, name = next(((u, n) for u, m in names.items() for n, i in m.items() if i == cred_id),
                               (next(iter(cfg.get("users", {})), "alice"), cred_id))
        elif "name" in payload:
            if "user" not in payload:
                raise keystone_missing("user", "application_credential")
            owner, name = self.user(cfg, payload["user"]), payload["name"]
            cred_id = names.get(owner, {}).get(name)
        else:
            raise keystone_missing("id or name", "application_credential")
        if cred_id is None or cfg.get("app_credentials", {}).get(cred_id) != payload.get("secret"):
            raise unauthorized()
        return cred_id, name, owner, None

    def stored_credential(self, payload):
        """The registry's credential a request names (by id, or by name and user id), or None."""
        if not self.server.resources:
            return None
        with registry(self.server.resources, kinds=("application_credentials",)) as reg:
            for c in reg["application_credentials"]:
                if c["id"] == payload.get("id") or (
                        c["name"] == payload.get("name") and isinstance(payload.get("user"), dict) and
                        payload["user"].get("id") == c["_user_id"]):
                    return c
        return None

    def issue_token(self, cfg, body, query):
        try:
            req = json.loads(body)["auth"]
            ident = req["identity"]
            if not isinstance(req, dict) or not isinstance(ident, dict):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise keystone_missing("auth", "request body")
        methods = ident.get("methods")
        if not isinstance(methods, list) or not methods:
            raise Refusal(400, "Invalid input for field 'identity': 'methods' is a required property")
        if methods not in (["password"], ["application_credential"]):
            raise unauthorized()  # an unsupported method (or a pair ddl never sends)
        method = methods[0]
        payload = ident.get(method)
        if not isinstance(payload, dict):
            raise keystone_missing(method, "identity")
        app_cred = stored = None
        if method == "password":
            if "user" not in payload:
                raise keystone_missing("user", "password")
            name = self.user(cfg, payload["user"])
            if cfg["users"][name] != payload["user"].get("password"):
                raise unauthorized()
            project = self.scoped_project(cfg, req)
        else:
            # Checked before the secret (code: auth/core.py); 401 with the reason and an "identity" member.
            if "scope" in req:
                raise Refusal(401, "Error authenticating with application credential: Application "
                                   "credentials cannot request a scope.", extra={"identity": {}})
            cred_id, cred_name, name, stored = self.app_credential(cfg, payload)
            app_cred = {"id": cred_id, "name": cred_name, "restricted": not (stored or {}).get("unrestricted")}
            if stored and stored["access_rules"]:
                app_cred["access_rules"] = stored["access_rules"]
            project = cfg["project"]
        audit = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip("=")[:22]
        # A token from an application credential ends no later than the credential (code: token/provider.py).
        ends = min(timestamp(3600), keystone_time((stored or {}).get("expires_at")) or timestamp(3600))
        token = {"methods": methods, "issued_at": timestamp(), "expires_at": ends,
                 "audit_ids": [audit],
                 "user": {"id": "u-" + name, "name": name, "domain": DEFAULT_DOMAIN, "password_expires_at": None}}
        if project is not None:
            token.update({"project": {"id": project["id"], "name": project["name"], "domain": DEFAULT_DOMAIN},
                          "is_domain": False,
                          "roles": [{"id": r["id"], "name": r["name"]} for r in (stored or {}).get("roles", ROLES)]})
            if "nocatalog" not in query:
                token["catalog"] = self.catalog(cfg, project["id"])
        if app_cred:
            token["application_credential"] = app_cred
        return token

    # --- Application Credentials -----------------------------------------------------------------------

    def application_credentials(self, method, parts, token, data):
        """/identity/v3/users/{user_id}/application_credentials[/{id}] for TOKEN's user: (status, body). Only
        the user itself may manage its credentials (policy "user_id:%(user_id)s"), not with a token from an
        application credential (code: application_credential/core.py, api/users.py)."""
        user_id = parts[3]
        action = {"POST": "create", "GET": "get" if len(parts) == 6 else "list", "DELETE": "delete"}.get(method)
        if action is None or (method != "GET" and len(parts) != (5 if method == "POST" else 6)):
            raise Refusal(405, "The method is not allowed for the requested URL.")
        if token["user"]["id"] != user_id:
            raise Refusal(403, "You are not authorized to perform the requested action: "
                               "identity:%s_application_credential%s." % (action, "s" if action == "list" else ""))
        if "application_credential" in token["methods"] and method != "GET":
            raise Refusal(403, "Using method 'application_credential' is not allowed for managing additional "
                               "application credentials.")
        link = self.base() + "/identity/v3/users/%s/application_credentials/" % user_id
        with registry(self.server.resources, write=method != "GET", kinds=("application_credentials",)) as reg:
            mine = [c for c in reg["application_credentials"] if c["_user_id"] == user_id]
            if method == "POST":
                cred = new_application_credential(reg, user_id, token["project"]["id"], body_of(data))
                return 201, {"application_credential": dict(credential_view(cred, link), secret=cred["_secret"])}
            if len(parts) == 5:
                return 200, {"application_credentials": [credential_view(c, link) for c in mine],
                             "links": {"self": link.rstrip("/"), "previous": None, "next": None}}
            cred = next((c for c in mine if c["id"] == parts[5]), None)
            if cred is None:
                raise Refusal(404, "Could not find application credential: %s." % parts[5])
            if method == "GET":
                return 200, {"application_credential": credential_view(cred, link)}
            reg["application_credentials"].remove(cred)
            return 204, None


def body_of(data):
    try:
        body = json.loads(data or b"null")["application_credential"]
        if isinstance(body, dict):
            return body
    except (ValueError, KeyError, TypeError):
        pass
    raise keystone_missing("application_credential", "request body")


def keystone_time(value):
    """An expires_at as a token shows it ("...T..:..:...000000Z"), or None."""
    if not value:
        return None
    t = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def expired(cred):
    end = keystone_time(cred.get("expires_at"))
    return end is not None and end <= timestamp()


def new_application_credential(reg, user_id, project_id, req):
    """Keystone's create: a unique name per user (409), roles the user holds on the project (by id or name;
    default: all of them), access rules {service, method, path} (the schema: path starts with "/", method one
    of six), a generated secret (64 random bytes, base64url) unless one is given; adds it to REG."""
    name = req.get("name")
    if not isinstance(name, str) or not name:
        raise keystone_missing("name", "application_credential")
    if any(c["name"] == name and c["_user_id"] == user_id for c in reg["application_credentials"]):
        raise Refusal(409, "Conflict occurred attempting to store application_credential - Duplicate "
                           "entry found with name %s." % name)
    roles = []
    for ref in req.get("roles") or ROLES:
        role = next((r for r in ROLES if r["id"] == ref.get("id") or r["name"] == ref.get("name")), None)
        if role is None:
            raise Refusal(404, "Could not find role: %s." % (ref.get("id") or ref.get("name")))
        roles.append(dict(role, domain_id=None))
    rules = []
    for rule in req.get("access_rules") or []:
        if set(rule) - {"path", "method", "service", "id"} or not str(rule.get("path", "/")).startswith("/") or \
                rule.get("method") not in ("POST", "GET", "HEAD", "PATCH", "PUT", "DELETE"):
            raise Refusal(400, "Invalid input for field 'access_rules': %s" % json.dumps(rule))
        rules.append({"id": uuid.uuid4().hex, "path": rule.get("path"), "method": rule["method"],
                      "service": rule.get("service")})
    expires = req.get("expires_at")
    cred = {"id": uuid.uuid4().hex, "name": name, "description": req.get("description"),
            "expires_at": keystone_time(expires)[:-1] if expires else None, "project_id": project_id,
            "roles": roles, "unrestricted": bool(req.get("unrestricted", False)), "access_rules": rules,
            "_user_id": user_id,
            "_secret": req.get("secret") or base64.urlsafe_b64encode(secrets.token_bytes(64)).decode().rstrip("=")}
    reg["application_credentials"].append(cred)
    return cred


def credential_view(cred, link):
    """A credential as "Show application credential details" has it: no secret."""
    return dict({k: v for k, v in cred.items() if not k.startswith("_")}, links={"self": link + cred["id"]})
