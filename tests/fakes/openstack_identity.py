"""Keystone v3 of the OpenStack API stand-in (tests/fakes/openstack_api.py): tokens and the catalog.

Follows "Identity API v3" https://docs.openstack.org/api-ref/identity/v3/ , sections "Password
authentication with scoped authorization", "... with unscoped authorization", "Authenticating with an
Application Credential", "Authentication and token management" (errors). Where the api-ref is thin, read
from keystone's code (exception.py, auth/core.py, auth/plugins/core.py; marked "(code)" in
docs/research/openstack-standin-review.md): the 400 messages, the generic 401 that hides why (no access to
the project, unknown domain), the application-credential scope refusal and its "identity": {} member.
"""
import base64
import json
import secrets

from openstack_errors import DEFAULT_DOMAIN, Refusal, keystone_missing, timestamp, unauthorized


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
        """(id, name, owner) of the application credential a request names; the secret must match."""
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
        return cred_id, name, owner

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
        app_cred = None
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
            cred_id, cred_name, name = self.app_credential(cfg, payload)
            app_cred = {"id": cred_id, "name": cred_name, "restricted": True}
            project = cfg["project"]
        audit = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip("=")[:22]
        token = {"methods": methods, "issued_at": timestamp(), "expires_at": timestamp(3600),
                 "audit_ids": [audit],
                 "user": {"id": "u-" + name, "name": name, "domain": DEFAULT_DOMAIN, "password_expires_at": None}}
        if project is not None:
            token.update({"project": {"id": project["id"], "name": project["name"], "domain": DEFAULT_DOMAIN},
                          "is_domain": False,
                          "roles": [{"id": "r-member", "name": "member"}, {"id": "r-reader", "name": "reader"}]})
            if "nocatalog" not in query:
                token["catalog"] = self.catalog(cfg, project["id"])
        if app_cred:
            token["application_credential"] = app_cred
        return token
