"""The IAM Query API of the AWS API stand-in (tests/fakes/aws_api.py): the actions `ddl gc --spec` uses to
remove a leaked cluster's node-credential role and instance profile, over the IAM entities of the simulated
region (tests/fakes/aws_iam.py holds them and IAM's refusals).

Follows the IAM API Reference (https://docs.aws.amazon.com/IAM/latest/APIReference/): "Making query
requests" (POST, Action, Version 2010-05-08; the global endpoint signs with region us-east-1, service iam),
"Common errors", and the actions API_GetRole, API_ListRolePolicies, API_DeleteRolePolicy, API_DeleteRole,
API_GetInstanceProfile, API_RemoveRoleFromInstanceProfile, API_DeleteInstanceProfile: each answer
<ActionResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><ActionResult>...</ActionResult>
<ResponseMetadata><RequestId/></ResponseMetadata></ActionResponse>, lists as <member> elements, errors as
<ErrorResponse><Error><Type>Sender</Type><Code/><Message/></Error><RequestId/></ErrorResponse>. A request
signed with an instance profile's credentials is refused (AccessDenied, 403): the node credential's role
has no IAM permission.
"""
import urllib.parse
from xml.sax.saxutils import escape

import aws_iam
from aws_region import registry, region_path
from aws_sigv4 import ApiError

IAM_VERSION = "2010-05-08"
IAM_NS = "https://iam.amazonaws.com/doc/2010-05-08/"
PARAMS = {"GetRole": {"RoleName"}, "ListRolePolicies": {"RoleName", "Marker", "MaxItems"},
          "DeleteRolePolicy": {"RoleName", "PolicyName"}, "DeleteRole": {"RoleName"},
          "GetInstanceProfile": {"InstanceProfileName"},
          "RemoveRoleFromInstanceProfile": {"InstanceProfileName", "RoleName"},
          "DeleteInstanceProfile": {"InstanceProfileName"}}
CHANGES = {"DeleteRolePolicy", "DeleteRole", "RemoveRoleFromInstanceProfile", "DeleteInstanceProfile"}


def xml(name, value):
    if value is None:
        return ""
    if isinstance(value, list):
        return "<%s>%s</%s>" % (name, "".join(xml("member", v) for v in value), name)
    if isinstance(value, dict):
        return "<%s>%s</%s>" % (name, "".join(xml(k, v) for k, v in value.items() if not k.startswith("_")), name)
    if isinstance(value, bool):
        value = "true" if value else "false"
    return "<%s>%s</%s>" % (name, escape(str(value)), name)


def _served_role(r):
    """A Role as IAM serves it: its trust policy URL-encoded (API_GetRole, AssumeRolePolicyDocument)."""
    out = {k: v for k, v in r.items() if not k.startswith("_")}
    out["AssumeRolePolicyDocument"] = urllib.parse.quote(out["AssumeRolePolicyDocument"], safe="")
    return out


def iam_dispatch(cfg, params):
    """params: list of (name, value). Returns the XML body; raises ApiError."""
    values = dict(params)
    action = values.get("Action", "")
    if action not in PARAMS:
        raise ApiError(400, "InvalidAction", "Could not find operation %s for version %s" % (action, IAM_VERSION))
    if values.get("Version") != IAM_VERSION:
        raise ApiError(400, "InvalidParameterValue", "The requested version (%s) of service iam does not exist "
                       "(the stand-in serves only %s)" % (values.get("Version"), IAM_VERSION))
    unknown = sorted(set(values) - PARAMS[action] - {"Action", "Version"})
    if unknown:
        raise ApiError(400, "InvalidParameterValue", "The parameter %s is not recognized (stand-in wording)." % unknown[0])
    if cfg.get("_caller_role"):
        raise ApiError(403, "AccessDenied", "User: arn:aws:sts::%s:assumed-role/%s is not authorized to perform: "
                       "iam:%s because no identity-based policy allows the iam:%s action"
                       % (aws_iam.ACCOUNT, cfg["_caller_role"], action, action))
    for name in PARAMS[action] - {"Marker", "MaxItems"}:
        if not values.get(name):
            raise ApiError(400, "ValidationError", "1 validation error detected: Value null at '%s' failed to satisfy "
                           "constraint: Member must not be null" % (name[0].lower() + name[1:]))
    result = None
    try:
        with registry(region_path(cfg), write=action in CHANGES) as reg:
            if action == "GetRole":
                result = {"Role": _served_role(aws_iam.role(reg, values["RoleName"]))}
            elif action == "ListRolePolicies":
                result = {"PolicyNames": sorted(aws_iam.role(reg, values["RoleName"])["_policies"]), "IsTruncated": False}
            elif action == "GetInstanceProfile":
                p = aws_iam.profile(reg, values["InstanceProfileName"])
                result = {"InstanceProfile": dict(p, Roles=[_served_role(r) for r in p["Roles"]])}
            elif action == "DeleteRolePolicy":
                aws_iam.delete_role_policy(reg, values["RoleName"], values["PolicyName"])
            elif action == "DeleteRole":
                aws_iam.delete_role(reg, values["RoleName"])
            elif action == "RemoveRoleFromInstanceProfile":
                aws_iam.remove_role_from_instance_profile(reg, values["InstanceProfileName"], values["RoleName"])
            else:
                aws_iam.delete_instance_profile(reg, values["InstanceProfileName"])
    except aws_iam.IamError as e:
        raise ApiError(e.status, e.code, e.message)
    return action, result


def iam_response_body(action, request_id, result):
    inner = xml(action + "Result", result) if result is not None else ""
    return ('<%sResponse xmlns="%s">%s<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>'
            % (action, IAM_NS, inner, request_id, action)).encode()


def iam_error_body(err, request_id):
    return ('<ErrorResponse xmlns="%s"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error>'
            '<RequestId>%s</RequestId></ErrorResponse>' % (IAM_NS, escape(err.code), escape(err.message), request_id)).encode()
