"""IAM in the simulated region of the AWS stand-ins: the role, inline policy and instance profile of the AWS
module's node credential (src/targets/aws/terraform/iam.tf), the temporary credentials EC2 gives an instance
with a profile through its metadata service (tests/fakes/aws_imds.py, run inside the instance's node), and the
evaluation of the role's policy for requests signed with them (tests/fakes/aws_region.py).

Follows:
  - IAM API Reference (https://docs.aws.amazon.com/IAM/latest/APIReference/): API_CreateRole (RoleName
    [\\w+=,.@-]+, 1-64 characters; EntityAlreadyExists 409 "Role with name X already exists.", names unique
    without regard to case; MalformedPolicyDocument 400), API_PutRolePolicy (PolicyName [\\w+=,.@-]+, 1-128;
    NoSuchEntity 404 "The role with name X cannot be found."), API_CreateInstanceProfile (InstanceProfileName
    [\\w+=,.@-]+, 1-128; EntityAlreadyExists "Instance Profile X already exists."), API_AddRoleToInstanceProfile
    (LimitExceeded 409 "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1": a profile holds at
    most one role), API_RemoveRoleFromInstanceProfile, API_DeleteInstanceProfile and API_DeleteRole
    (DeleteConflict 409 "Cannot delete entity, must remove roles from instance profile first." / "Cannot
    delete entity, must delete policies first."), API_DeleteRolePolicy; the data types Role and
    InstanceProfile (Path, RoleName, RoleId AROA..., Arn arn:aws:iam::<account>:role/<name>, CreateDate,
    AssumeRolePolicyDocument, Tags; InstanceProfileName, InstanceProfileId AIPA..., Roles).
  - hashicorp/aws provider, "Resource: aws_iam_instance_profile" (create: CreateInstanceProfile then
    AddRoleToInstanceProfile; delete: RemoveRoleFromInstanceProfile then DeleteInstanceProfile) and
    "Resource: aws_iam_role" (delete: the role is removed from its instance profiles first).
  - IAM User Guide, "Policy evaluation logic" (an explicit Deny wins, else an Allow whose Action, Resource and
    every Condition match, else the implicit deny), "IAM JSON policy elements: Condition operators"
    (StringEquals, StringLike; "Multivalued context keys": ForAllValues:, ForAnyValue:) and "AWS global
    condition context keys": aws:ResourceTag/<key> (the tags of the resource acted on) and aws:TagKeys (the
    keys of the tags in the request).
  - "Error codes for the Amazon EC2 API": UnauthorizedOperation (403) "You are not authorized to perform this
    operation."
  - Amazon EC2 User Guide, "Retrieve security credentials from instance metadata": an instance's credentials
    are temporary (AccessKeyId ASIA..., SecretAccessKey, Token, Expiration), those of its profile's role.

Registry kinds (aws_region.REGION_KINDS): "iam_roles" (Role items plus "_policies" {name: document}),
"iam_instance_profiles" (InstanceProfile items, Roles holding Role items), "instance_credentials" ({"instanceId",
"role", "AccessKeyId", "_secret", "_token", "Expiration"}: registered with the EC2 API stand-in).
"""
import datetime
import fnmatch
import json
import os
import re
import secrets
import signal
import string
import subprocess
import sys

from aws_sigv4 import ApiError

ACCOUNT = "123456789012"
NAME_RE = re.compile(r"^[\w+=,.@-]+$")
CREDENTIAL_HOURS = 6


class IamError(Exception):
    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _id(prefix):
    return prefix + "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(17))


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_name(value, member, longest):
    if not (1 <= len(value) <= longest) or not NAME_RE.match(value):
        raise IamError(400, "ValidationError", "1 validation error detected: Value '%s' at '%s' failed to satisfy "
                       "constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+ and have length "
                       "between 1 and %d" % (value, member, longest))


def _document(text):
    try:
        doc = json.loads(text)
    except ValueError:
        raise IamError(400, "MalformedPolicyDocument", "This policy contains invalid Json")
    if not isinstance(doc, dict) or not isinstance(doc.get("Statement"), (list, dict)):
        raise IamError(400, "MalformedPolicyDocument", "Syntax errors in policy.")
    return doc


def role(reg, name):
    r = next((r for r in reg["iam_roles"] if r["RoleName"].lower() == name.lower()), None)
    if r is None:
        raise IamError(404, "NoSuchEntity", "The role with name %s cannot be found." % name)
    return r


def profile(reg, name):
    p = next((p for p in reg["iam_instance_profiles"] if p["InstanceProfileName"].lower() == name.lower()), None)
    if p is None:
        raise IamError(404, "NoSuchEntity", "Instance Profile %s cannot be found." % name)
    return p


def create_role(reg, name, trust, description, tags):
    _check_name(name, "roleName", 64)
    _document(trust)
    if any(r["RoleName"].lower() == name.lower() for r in reg["iam_roles"]):
        raise IamError(409, "EntityAlreadyExists", "Role with name %s already exists." % name)
    r = {"Path": "/", "RoleName": name, "RoleId": _id("AROA"), "Arn": "arn:aws:iam::%s:role/%s" % (ACCOUNT, name),
         "CreateDate": _now(), "AssumeRolePolicyDocument": trust, "Description": description,
         "MaxSessionDuration": 3600, "Tags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())], "_policies": {}}
    reg["iam_roles"].append(r)
    return r


def put_role_policy(reg, role_name, name, document):
    _check_name(name, "policyName", 128)
    _document(document)
    role(reg, role_name)["_policies"][name] = document


def delete_role_policy(reg, role_name, name):
    r = role(reg, role_name)
    if name not in r["_policies"]:
        raise IamError(404, "NoSuchEntity", "The role policy with name %s cannot be found." % name)
    del r["_policies"][name]


def create_instance_profile(reg, name, tags):
    _check_name(name, "instanceProfileName", 128)
    if any(p["InstanceProfileName"].lower() == name.lower() for p in reg["iam_instance_profiles"]):
        raise IamError(409, "EntityAlreadyExists", "Instance Profile %s already exists." % name)
    p = {"Path": "/", "InstanceProfileName": name, "InstanceProfileId": _id("AIPA"),
         "Arn": "arn:aws:iam::%s:instance-profile/%s" % (ACCOUNT, name), "CreateDate": _now(), "Roles": [],
         "Tags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())]}
    reg["iam_instance_profiles"].append(p)
    return p


def add_role_to_instance_profile(reg, profile_name, role_name):
    p, r = profile(reg, profile_name), role(reg, role_name)
    if p["Roles"]:
        raise IamError(409, "LimitExceeded", "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1")
    p["Roles"].append({k: v for k, v in r.items() if not k.startswith("_") and k != "Tags"})


def remove_role_from_instance_profile(reg, profile_name, role_name):
    p = profile(reg, profile_name)
    if not any(r["RoleName"].lower() == role_name.lower() for r in p["Roles"]):
        raise IamError(404, "NoSuchEntity", "The role with name %s cannot be found." % role_name)
    p["Roles"] = [r for r in p["Roles"] if r["RoleName"].lower() != role_name.lower()]


def delete_instance_profile(reg, name):
    p = profile(reg, name)
    if p["Roles"]:
        raise IamError(409, "DeleteConflict", "Cannot delete entity, must remove roles from instance profile first.")
    reg["iam_instance_profiles"] = [o for o in reg["iam_instance_profiles"] if o is not p]


def delete_role(reg, name):
    r = role(reg, name)
    if any(x["RoleName"] == r["RoleName"] for p in reg["iam_instance_profiles"] for x in p["Roles"]):
        raise IamError(409, "DeleteConflict", "Cannot delete entity, must remove roles from instance profile first.")
    if r["_policies"]:
        raise IamError(409, "DeleteConflict", "Cannot delete entity, must delete policies first.")
    reg["iam_roles"] = [o for o in reg["iam_roles"] if o is not r]


# ---- an instance's credentials and its metadata service ------------------------------------------------

def profile_role(reg, instance):
    """The role of INSTANCE's instance profile (its iamInstanceProfile), or None."""
    arn = (instance.get("iamInstanceProfile") or {}).get("arn", "")
    p = next((p for p in reg["iam_instance_profiles"] if p["Arn"] == arn), None)
    return p["Roles"][0]["RoleName"] if p and p["Roles"] else None


def issue_credentials(reg, instance):
    """Fresh temporary credentials of INSTANCE's role (those it had are dropped), as EC2 gives them at boot."""
    drop_credentials(reg, instance["instanceId"])
    name = profile_role(reg, instance)
    if name is None:
        return None
    expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=CREDENTIAL_HOURS)
    c = {"instanceId": instance["instanceId"], "role": name, "AccessKeyId": _id("ASIA")[:20],
         "_secret": secrets.token_urlsafe(30), "_token": secrets.token_urlsafe(60), "LastUpdated": _now(),
         "Expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}
    reg["instance_credentials"].append(c)
    return c


def drop_credentials(reg, instance_id):
    reg["instance_credentials"] = [c for c in reg["instance_credentials"] if c["instanceId"] != instance_id]


def start_imds(registry_path, instance, netns):
    """The instance's metadata service at 169.254.169.254:80 inside its node (network namespace NETNS): the
    address on the node's loopback, the server (tests/fakes/aws_imds.py) in the namespace; it ends with the
    node's processes (stop, terminate). Its pid in instance["_imds"]."""
    subprocess.run(["ip", "-n", netns, "addr", "replace", "169.254.169.254/32", "dev", "lo"], check=True)
    log = open(os.path.join(os.path.dirname(registry_path), "imds-%s.log" % instance["instanceId"]), "a")
    p = subprocess.Popen(["nsenter", "--net=/run/netns/" + netns, sys.executable,
                          os.path.join(os.path.dirname(os.path.abspath(__file__)), "aws_imds.py"),
                          "--registry", registry_path, "--instance-id", instance["instanceId"]],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    instance["_imds"] = {"netns": netns, "pid": p.pid, "registry": registry_path}


def stop_imds(instance):
    pid = (instance.get("_imds") or {}).get("pid")
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass


def caller_role(reg, access_key):
    c = next((c for c in reg["instance_credentials"] if c["AccessKeyId"] == access_key), None)
    return c["role"] if c else None


# ---- policy evaluation ---------------------------------------------------------------------------------

def _list(v):
    return v if isinstance(v, list) else [v]


def _condition_ok(conditions, context):
    for operator, keys in conditions.items():
        qualifier, _, op = operator.rpartition(":")
        if op not in ("StringEquals", "StringLike"):
            return False  # an operator the stand-in does not model never matches
        match = (lambda a, b: a == b) if op == "StringEquals" else fnmatch.fnmatchcase
        for key, wanted in keys.items():
            values = context.get(key)
            if values is None:
                if qualifier != "ForAllValues":
                    return False
                continue
            values = _list(values)
            if qualifier == "ForAllValues":
                ok = all(any(match(v, w) for w in _list(wanted)) for v in values)
            else:  # ForAnyValue, or a single-valued key
                ok = any(match(v, w) for v in values for w in _list(wanted))
            if not ok:
                return False
    return True


def _statement_matches(s, action, arn, context):
    return (any(fnmatch.fnmatchcase(action.lower(), a.lower()) for a in _list(s.get("Action", [])))
            and any(fnmatch.fnmatchcase(arn, r) for r in _list(s.get("Resource", [])))
            and _condition_ok(s.get("Condition", {}), context))


def allowed(reg, role_name, action, arn, context):
    statements = [s for doc in role(reg, role_name)["_policies"].values() for s in _list(json.loads(doc)["Statement"])]
    if any(s.get("Effect") == "Deny" and _statement_matches(s, action, arn, context) for s in statements):
        return False
    return any(s.get("Effect") == "Allow" and _statement_matches(s, action, arn, context) for s in statements)


def authorize(reg, role_name, region, req):
    """Refuses (UnauthorizedOperation) an EC2 request of role ROLE_NAME unless its policy allows the action on
    every instance it names (aws:ResourceTag/<key> from each one's tags; aws:TagKeys from CreateTags' Tag.N.Key)."""
    action = "ec2:" + req.action
    ids = req.lists.get("InstanceId") or req.lists.get("ResourceId") or []
    tag_keys = [v for k, v in sorted(req.scalars.items()) if re.match(r"^Tag\.\d+\.Key$", k)]
    by_id = {i["instanceId"]: i for i in reg["instances"]}
    targets = ids or ["*"]
    for ident in targets:
        tags = {t["key"]: t["value"] for t in by_id.get(ident, {}).get("tagSet", [])}
        context = {"aws:ResourceTag/" + k: v for k, v in tags.items()}
        if req.action == "CreateTags":
            context["aws:TagKeys"] = tag_keys
        arn = "arn:aws:ec2:%s:%s:instance/%s" % (region, ACCOUNT, ident) if ids else "*"
        if not allowed(reg, role_name, action, arn, context):
            raise ApiError(403, "UnauthorizedOperation", "You are not authorized to perform this operation.")


# ---- what the Terraform stand-in's AWS mode creates (src/targets/aws/terraform/iam.tf) ------------------

TF_IAM = ("aws_iam_role.master[0]", "aws_iam_role_policy.master[0]", "aws_iam_instance_profile.master[0]")


def module_policy(values):
    """The policy of iam.tf's aws_iam_role_policy.master, as its jsonencode writes it."""
    this = {"aws:ResourceTag/ddl-cluster": values["cluster_name"]}
    instances = "arn:aws:ec2:%s:*:instance/*" % values["region"]
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Action": ["ec2:StopInstances", "ec2:TerminateInstances"], "Condition": {"StringEquals": this},
         "Effect": "Allow", "Resource": instances, "Sid": "EndThisCluster"},
        {"Action": "ec2:CreateTags", "Condition": {"ForAllValues:StringEquals": {"aws:TagKeys": ["ddl-autostop"]},
                                                   "StringEquals": this},
         "Effect": "Allow", "Resource": instances, "Sid": "RecordWhy"}]}, separators=(",", ":"))


def tf_create(reg, addr, values, tags):
    """Creates iam.tf's resource ADDR (IamError as the API refuses it); returns the provider's id: the role's
    and profile's names, "<role>:<policy>" for the policy."""
    c = values["cluster_name"]
    if addr.startswith("aws_iam_role."):
        trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow",
                                                                    "Principal": {"Service": "ec2.amazonaws.com"}}]})
        create_role(reg, c + "-master", trust, "ddl cluster %s: the master may stop or terminate this cluster's "
                    "instances (autostop)" % c, dict(tags, Name=c + "-master"))
        return c + "-master"
    if addr.startswith("aws_iam_role_policy."):
        put_role_policy(reg, c + "-master", c + "-autostop", module_policy(values))
        return "%s-master:%s-autostop" % (c, c)
    create_instance_profile(reg, c + "-master", dict(tags, Name=c + "-master"))
    add_role_to_instance_profile(reg, c + "-master", c + "-master")
    return c + "-master"


def tf_delete(reg, addr, ident):
    """Deletes iam.tf's resource ADDR (id IDENT) as the provider does; what is gone already is no error."""
    try:
        if addr.startswith("aws_iam_role_policy."):
            delete_role_policy(reg, *ident.split(":", 1))
        elif addr.startswith("aws_iam_instance_profile."):
            for r in list(profile(reg, ident)["Roles"]):
                remove_role_from_instance_profile(reg, ident, r["RoleName"])
            delete_instance_profile(reg, ident)
        else:
            for p in reg["iam_instance_profiles"]:
                if any(r["RoleName"] == ident for r in p["Roles"]):
                    remove_role_from_instance_profile(reg, p["InstanceProfileName"], ident)
            delete_role(reg, ident)
    except IamError as e:
        if e.code != "NoSuchEntity":
            raise
