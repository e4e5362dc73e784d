"""The http state backend of the Terraform stand-in (tests/fakes/terraform), as Terraform documents it:

  "Backend Type: http" https://developer.hashicorp.com/terraform/language/backend/http
    State is fetched with GET, updated with POST (update_method), purged with DELETE. With a lock_address,
    locking sends the lock info as the body with lock_method (default LOCK) and unlocking with
    unlock_method (default UNLOCK) to unlock_address; the endpoint answers 200 for success and 423 Locked
    or 409 Conflict with the holder's lock info when the lock is taken; any other status is an error.
    While the lock is held, the ID of the lock info is added to state updates as the query parameter ID.
    Each setting may come from the backend block or, when the block does not set it, from its
    environment variable: address TF_HTTP_ADDRESS (required), update_method TF_HTTP_UPDATE_METHOD,
    lock_address TF_HTTP_LOCK_ADDRESS, unlock_address TF_HTTP_UNLOCK_ADDRESS, lock_method
    TF_HTTP_LOCK_METHOD, unlock_method TF_HTTP_UNLOCK_METHOD, username TF_HTTP_USERNAME, password
    TF_HTTP_PASSWORD (HTTP basic authentication).
  "State: Locking" https://developer.hashicorp.com/terraform/language/state/locking : operations that
    could write state (plan, apply, destroy) take the lock unless -lock=false; init and output do not.

Only http:// and https:// addresses are accepted (the page: "The address of the REST endpoint"); retries
(retry_max, retry_wait_min/max) apply to connection errors and 5xx answers in Terraform and are not
modelled: the stand-in's endpoint answers at once or not at all.
"""
import base64
import datetime
import getpass
import hashlib
import json
import socket
import sys
import urllib.error
import urllib.request
import uuid

SETTINGS = {"address": "TF_HTTP_ADDRESS", "update_method": "TF_HTTP_UPDATE_METHOD",
            "lock_address": "TF_HTTP_LOCK_ADDRESS", "unlock_address": "TF_HTTP_UNLOCK_ADDRESS",
            "lock_method": "TF_HTTP_LOCK_METHOD", "unlock_method": "TF_HTTP_UNLOCK_METHOD",
            "username": "TF_HTTP_USERNAME", "password": "TF_HTTP_PASSWORD",
            "retry_max": "TF_HTTP_RETRY_MAX", "retry_wait_min": "TF_HTTP_RETRY_WAIT_MIN",
            "retry_wait_max": "TF_HTTP_RETRY_WAIT_MAX", "skip_cert_verification": None}
DEFAULTS = {"update_method": "POST", "lock_method": "LOCK", "unlock_method": "UNLOCK"}


class BackendError(RuntimeError):
    def __init__(self, summary, detail):
        super().__init__(detail)
        self.summary = summary


def config(block, environ):
    """The settings from the backend block, each missing one from its environment variable."""
    unknown = [k for k in block if k not in SETTINGS]
    if unknown:
        raise BackendError("Unsupported argument", 'An argument named "%s" is not expected here.' % unknown[0])
    c = dict(DEFAULTS)
    for key, var in SETTINGS.items():
        if key in block:
            c[key] = str(block[key])
        elif var and environ.get(var):
            c[key] = environ[var]
    if not c.get("address"):
        raise BackendError("Missing required argument",
                           'The argument "address" is required, but was not set.')
    for key in ("address", "lock_address", "unlock_address"):
        if c.get(key) and not c[key].startswith(("http://", "https://")):
            raise BackendError("Invalid %s" % key, "address must be HTTP or HTTPS")
    return c


class Client:
    def __init__(self, c):
        self.c = c
        self.lock_info = None

    def _request(self, method, url, body=None, headers=None):
        req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
        if self.c.get("username") or self.c.get("password"):
            cred = "%s:%s" % (self.c.get("username", ""), self.c.get("password", ""))
            req.add_header("Authorization", "Basic " + base64.b64encode(cred.encode()).decode())
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except (urllib.error.URLError, OSError) as e:
            raise BackendError("Failed to reach the state", "%s %s: %s" % (method, url.split("?")[0], e))

    @staticmethod
    def _auth_error(status):
        if status == 401:
            return "HTTP remote state endpoint requires auth"
        if status == 403:
            return "HTTP remote state endpoint invalid auth"
        return None

    def get(self):
        """The state's JSON text, or None when there is none (200 with a body; 204 or 404: none)."""
        status, body = self._request("GET", self.c["address"])
        if status == 200 and body:
            return body.decode()
        if status in (200, 204, 404):
            return None
        raise BackendError("Error loading state", self._auth_error(status) or
                           "Unexpected HTTP response code %d" % status)

    def put(self, text):
        url = self.c["address"]
        if self.lock_info is not None:
            url += ("&" if "?" in url else "?") + "ID=" + self.lock_info["ID"]
        data = text.encode()
        status, _ = self._request(self.c["update_method"], url, data, {
            "Content-Type": "application/json",
            "Content-MD5": base64.b64encode(hashlib.md5(data).digest()).decode()})
        if status not in (200, 201, 204):
            raise BackendError("Failed to save state", self._auth_error(status) or "HTTP error: %d" % status)

    def lock(self, operation, version):
        if not self.c.get("lock_address"):
            return
        info = {"ID": str(uuid.uuid4()), "Operation": operation, "Info": "",
                "Who": "%s@%s" % (getpass.getuser(), socket.gethostname()), "Version": version,
                "Created": datetime.datetime.now(datetime.timezone.utc).isoformat(), "Path": ""}
        status, body = self._request(self.c["lock_method"], self.c["lock_address"], json.dumps(info).encode(),
                                     {"Content-Type": "application/json"})
        if status == 200:
            self.lock_info = info
            return
        if status in (409, 423):
            try:
                held = json.loads(body)
            except ValueError:
                held = {}
            raise BackendError("Error acquiring the state lock",
                               "HTTP remote state already locked: ID=%s\nLock Info:\n  ID:        %s\n"
                               "  Operation: %s\n  Who:       %s\n  Created:   %s\n\nTerraform acquires a state "
                               "lock to protect the state from being written by multiple users at the same time."
                               % (held.get("ID", ""), held.get("ID", ""), held.get("Operation", ""),
                                  held.get("Who", ""), held.get("Created", "")))
        raise BackendError("Error acquiring the state lock", self._auth_error(status) or
                           "Unexpected HTTP response code %d" % status)

    def unlock(self):
        if self.lock_info is None or not self.c.get("unlock_address"):
            return
        status, _ = self._request(self.c["unlock_method"], self.c["unlock_address"],
                                  json.dumps(self.lock_info).encode(), {"Content-Type": "application/json"})
        self.lock_info = None
        if status != 200:
            sys.stderr.write("\nError: Error releasing the state lock\n\nHTTP error: %d\n" % status)
            sys.exit(1)
