"""What every service of the OpenStack API stand-in (tests/fakes/openstack_api.py) shares: the error
bodies each service answers with, and the paging and boolean parsing of its queries.

Follows:
  Keystone  "Identity API v3" https://docs.openstack.org/api-ref/identity/v3/ , section "Authentication and
            token management" (errors): {"error": {code, title, message}}
  Nova      "Faults" https://docs.openstack.org/api-guide/compute/faults.html : {faultName: {code, message}}
            (Cinder answers alike)
  Neutron   "Networking API v2.0" https://docs.openstack.org/api-ref/network/v2/ , "Faults":
            {"NeutronError": {type, message, detail}}
  Glance    "Image Service API v2" https://docs.openstack.org/api-ref/image/v2/ : {"message", "code":
            "400 Bad Request", "title"}
Where the api-ref is thin, read from the services' server code (marked "(code)" in
docs/research/openstack-standin-review.md) and only as exact as that reading: Keystone's 400 messages
("Expecting to find X in Y. The server could not comply ...") and the generic 401 body that hides why
(keystone exception.py, auth/core.py); Nova's and Cinder's fault names per status (nova/cinder
api/openstack/wsgi.py); Nova's and Glance's limit/marker messages; neutron-lib's InvalidInput for a value
that is not a boolean (oslo strutils' strict strings).
"""
import datetime
import http

DEFAULT_DOMAIN = {"id": "default", "name": "Default"}
AUTH_REQUIRED = "The request you have made requires authentication."
CLIENT_AT_FAULT = (" The server could not comply with the request since it is either malformed or otherwise"
                   " incorrect. The client is assumed to be in error.")
NOT_FOUND = "The resource could not be found."
# webob's text for HTTPUnauthorized, which Glance sends as {"message", "code", "title"}.
GLANCE_401 = ("This server could not verify that you are authorized to access the document you requested."
              " Either you supplied the wrong credentials (e.g., bad password), or your browser does not"
              " understand how to supply the credentials required.")
# Nova's and Cinder's fault names by status; any other status is a computeFault.
FAULT_NAMES = {400: "badRequest", 401: "unauthorized", 403: "forbidden", 404: "itemNotFound",
               405: "badMethod", 409: "conflictingRequest", 413: "overLimit", 415: "badMediaType",
               429: "overLimit", 501: "notImplemented", 503: "serviceUnavailable"}
# oslo strutils' strict boolean strings, which neutron-lib's convert_to_boolean uses.
TRUE_STRINGS = ("1", "t", "true", "on", "y", "yes")
FALSE_STRINGS = ("0", "f", "false", "off", "n", "no")
NEUTRON_QUOTA_DEFAULTS = {"network": 100, "subnet": 100, "subnetpool": -1, "port": 500, "router": 10,
                          "floatingip": 50, "security_group": 10, "security_group_rule": 100,
                          "rbac_policy": 10}


class Refusal(Exception):
    """An error answer: STATUS with MESSAGE, in the body shape of the service that refuses."""

    def __init__(self, status, message, kind=None, extra=None):
        super().__init__(message)
        self.status, self.message, self.kind, self.extra = status, message, kind, extra or {}


def phrase(status):
    return http.HTTPStatus(status).phrase


def service_of(path):
    """The service a path belongs to, from its first segment (identity, compute, image, network, volume)."""
    return path.strip("/").split("/", 1)[0]


def error_body(service, status, message, kind=None, extra=None):
    if service == "identity":
        return {"error": dict({"code": status, "title": phrase(status), "message": message}, **(extra or {}))}
    if service in ("compute", "volume"):
        return {FAULT_NAMES.get(status, "computeFault"): {"code": status, "message": message}}
    if service == "network":
        kind = kind or "HTTP" + phrase(status).replace(" ", "").replace("-", "")
        return {"NeutronError": {"type": kind, "message": message, "detail": ""}}
    # Glance (webob's JSON error), and anything outside the five services.
    return {"message": message, "code": "%d %s" % (status, phrase(status)), "title": phrase(status)}


def keystone_missing(attribute, target):
    """Keystone's ValidationError: 400 'Expecting to find ATTRIBUTE in TARGET. ...' (code: exception.py)."""
    return Refusal(400, "Expecting to find %s in %s." % (attribute, target) + CLIENT_AT_FAULT)


def unauthorized():
    """Keystone's 401 in production: the reason (unknown user, wrong secret, no role, unknown domain) is
    hidden unless insecure_debug is on (code: SecurityError)."""
    return Refusal(401, AUTH_REQUIRED)


def paging_int(query, name, default):
    """limit as Nova and Glance read it: an integer >= 0, else 400 '<name> param must be ...' (code)."""
    if name not in query:
        return default
    try:
        value = int(query[name][0])
    except ValueError:
        raise Refusal(400, "%s param must be an integer" % name)
    if value < 0:
        raise Refusal(400, "%s param must be positive" % name)
    return value


def after_marker(items, query, not_found):
    """The items after the one whose id is the `marker` query value; NOT_FOUND(marker) when it is unknown."""
    if "marker" not in query:
        return items
    marker = query["marker"][0]
    ids = [i["id"] for i in items]
    if marker not in ids:
        raise Refusal(400, not_found % marker)
    return items[ids.index(marker) + 1:]


def neutron_bool(value):
    v = value.strip().lower()
    if v in TRUE_STRINGS:
        return True
    if v in FALSE_STRINGS:
        return False
    raise Refusal(400, "Invalid input for operation: '%s' cannot be converted to boolean." % value,
                  kind="InvalidInput")


def timestamp(offset_s=0):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=offset_s)
    return t.strftime("%Y-%m-%dT%H:%M:%S.000000Z")
