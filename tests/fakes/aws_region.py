"""The simulated region of the AWS API stand-in (tests/fakes/aws_api.py --resources): the EC2 actions over
the region's registry, and the table of every EC2 action the stand-in serves.

Follows:
  - Amazon EC2 API Reference (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/): API_DescribeInstances (Filter.N with
    tag:<key>, instance-state-name, instance-id; reservationSet/instancesSet, instanceState code and name,
    launchTime, tagSet; MaxResults 5-1000 and NextToken), API_TerminateInstances (instancesSet with
    currentState/previousState; the instance is shutting-down, then terminated and still listed),
    API_StopInstances / API_StartInstances (instancesSet with currentState/previousState: stopping 64 then
    stopped 80, pending 0 then running 16; already stopped / running is no error; the public IPv4 address is
    released at stop; "Stop and start Amazon EC2 instances" in the EC2 User Guide: the EBS root volume and the
    private address stay; IncorrectInstanceState for an instance in no state to stop or start,
    UnsupportedOperation for a one-time Spot Instance),
    API_DescribeSecurityGroups (securityGroupInfo, ipPermissions with groups), API_RevokeSecurityGroupIngress
    (GroupId, IpPermissions.N), API_DeleteSecurityGroup, API_DescribeSubnets/API_DeleteSubnet,
    API_DescribeInternetGateways (attachmentSet)/API_DetachInternetGateway/API_DeleteInternetGateway,
    API_DescribeRouteTables (associationSet, main)/API_DeleteRouteTable, API_DescribeVpcs/API_DeleteVpc,
    API_DescribeKeyPairs (keySet)/API_DeleteKeyPair (succeeds for a key that does not exist),
    API_DescribePlacementGroups/API_DeletePlacementGroup; "Error codes for the Amazon EC2 API":
    DependencyViolation ("The specified object has dependent resources"), InvalidGroup.NotFound,
    InvalidSubnetID.NotFound, InvalidInternetGatewayID.NotFound, Gateway.NotAttached,
    InvalidRouteTableID.NotFound, InvalidVpcID.NotFound, InvalidInstanceID.NotFound,
    InvalidPlacementGroup.Unknown, InvalidPlacementGroup.InUse. Which deletes EC2 refuses: "Delete your VPC"
    (Amazon VPC User Guide: subnets, security groups, route tables and gateways first), "Delete a security
    group" (not while an instance or another group's rule uses it), "Detach an internet gateway" (not while
    instances in the VPC have public addresses), "Delete a subnet" (not while it has network interfaces).

The simulated region: aws_api.py --resources FILE (default $FAKE_AWS_RESOURCES; unset: none, and only the
actions of aws_ec2.py are served) is the registry the Terraform stand-in (tests/fakes/terraform) writes when it creates and
deletes the AWS module's resources, read and written under flock(2) on FILE.lock:
  {"instances": [...], "security_groups": [...], "subnets": [...], "internet_gateways": [...],
   "route_tables": [...], "vpcs": [...], "key_pairs": [...], "placement_groups": [...]}
each entry in the shape of its Describe* item (element names as keys), plus private keys starting with "_"
that are never served: an instance's "_fake_nodes" {"id", "state_dir", "node", "tool"} (its ddl-fake-nodes
node, taken down when it is terminated, powered off when it is stopped and booted again, with its files,
when it is started) and "_since" (when it began shutting down, stopping or pending: the state it goes to
follows a second later). The node's public address stands for the one EC2 gives at start (the stand-in's
nodes keep theirs).
"""
import datetime
import re
import threading
import time
import uuid

import aws_iam  # the node credential: instance profiles, their credentials and metadata service, policies
import openstack_registry  # the registry's locking and ddl-fake-nodes handling, shared
from aws_ec2 import (EC2_VERSION, FILTERS, MAX_RESULTS, Ec2Request, describe_images, describe_instance_type_offerings,
                     describe_instance_types)
from aws_sigv4 import ApiError

REGION_KINDS = ("instances", "security_groups", "subnets", "internet_gateways", "route_tables", "vpcs", "key_pairs",
                "placement_groups", "iam_roles", "iam_instance_profiles", "instance_credentials")
STATE_CODES = {"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48, "stopping": 64, "stopped": 80}
NODES_LOCK = threading.Lock()


def registry(path, write=False):
    """The region at PATH as a dict of REGION_KINDS lists, under flock(2) on PATH.lock (shared to read,
    exclusive to change: the Terraform stand-in changes it too); with write, saved atomically at the end.
    The OpenStack stand-in's registry does the locking and saving."""
    return openstack_registry.registry(path, write, REGION_KINDS)


def new_id(prefix):
    """EC2's resource ids: a prefix and 17 hex digits."""
    return "%s-%s" % (prefix, uuid.uuid4().hex[:17])


def iso_now():
    """launchTime as EC2 writes it: ISO 8601 UTC with milliseconds."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def tag_set(tags):
    return [{"key": k, "value": v} for k, v in sorted(tags.items())]


def served(item):
    return {k: v for k, v in item.items() if not k.startswith("_")}


def tags_match(req, item):
    tags = {t["key"]: t["value"] for t in item.get("tagSet", [])}
    for name in req.filters:
        if name.startswith("tag:") and not req.matches(name, tags.get(name[4:], "\0")):
            return False
    return "tag-key" not in req.filters or any(req.matches("tag-key", k) for k in tags)


def region_path(cfg):
    path = cfg.get("_resources")
    if not path:
        raise ApiError(400, "InvalidAction", "The stand-in serves no region: start it with --resources (stand-in wording).")
    return path


def live(instance):
    return instance["instanceState"]["name"] != "terminated"


SETTLES_TO = {"shutting-down": "terminated", "stopping": "stopped", "pending": "running"}


def settle(reg):
    """EC2 ends a transition in the background: an instance shutting down, stopping or pending for a second
    is terminated, stopped or running."""
    for i in reg["instances"]:
        name = i["instanceState"]["name"]
        if name in SETTLES_TO and time.time() - i.get("_since", 0) >= 1:
            i["instanceState"] = {"code": STATE_CODES[SETTLES_TO[name]], "name": SETTLES_TO[name]}


def power_instance(reg, i, on):
    """StopInstances (ON false) or StartInstances (ON true) of one instance: EC2's refusals, the node powered
    off or booted (tests/fakes/openstack_registry.py fake_nodes_power), then stopping / pending. Returns the
    previous state."""
    before, name, iid = dict(i["instanceState"]), i["instanceState"]["name"], i["instanceId"]
    if not on and i.get("instanceLifecycle") == "spot":
        raise ApiError(400, "UnsupportedOperation", "You can't stop the Spot Instance '%s' because it is associated "
                       "with a one-time Spot Instance request. You can only stop Spot Instances associated with "
                       "persistent Spot Instance requests." % iid)
    if name in (("stopped", "stopping") if not on else ("running", "pending")):
        return before  # already there (or on the way): no error, nothing changes
    if name != ("running" if not on else "stopped"):
        raise ApiError(400, "IncorrectInstanceState", "The instance '%s' is not in a state from which it can be %s."
                       % (iid, "started" if on else "stopped"))
    nodes = i.get("_fake_nodes")
    if nodes:
        names = [o["_fake_nodes"]["node"] for o in reg["instances"] if live(o) and
                 o.get("_fake_nodes", {}).get("id") == nodes["id"] and o["_fake_nodes"].get("state_dir") == nodes["state_dir"]]
        error = openstack_registry.fake_nodes_power(nodes, names, on)
        if error:
            raise ApiError(500, "InternalError", error)
    state = "pending" if on else "stopping"
    i["instanceState"] = {"code": STATE_CODES[state], "name": state}
    i["_since"] = time.time()
    # An instance profile's credentials and metadata service live while the instance runs (the node's
    # processes, the service among them, ended with the stop).
    aws_iam.drop_credentials(reg, iid)
    if on and i.get("_imds") and aws_iam.issue_credentials(reg, i):
        aws_iam.start_imds(i["_imds"]["registry"], i, i["_imds"]["netns"])
    if on:
        i["ipAddress"] = i.get("_public_address")
        i["launchTime"] = iso_now()  # API_Instance: "The time that the instance was last launched" (started)
    else:
        i["_public_address"] = i.get("ipAddress")
        i["ipAddress"] = None
    return before


def stop_or_start(on):
    def action(cfg, req):
        out = []
        with NODES_LOCK:
            with registry(region_path(cfg), write=True) as reg:
                ids, by_id = requested_instances(reg, req)
                for iid in ids:
                    before = power_instance(reg, by_id[iid], on)
                    out.append({"instanceId": iid, "currentState": by_id[iid]["instanceState"], "previousState": before})
        return [("instancesSet", out)]
    return action


def describe_instances(cfg, req):
    with registry(region_path(cfg), write=True) as reg:
        settle(reg)
        ids = req.lists.get("InstanceId", [])
        known = {i["instanceId"] for i in reg["instances"]}
        missing = [i for i in ids if i not in known]
        if missing:
            raise ApiError(400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist" % "', '".join(missing))
        items = [i for i in reg["instances"] if (not ids or i["instanceId"] in ids) and tags_match(req, i) and
                 all(req.matches(f, v) for f, v in (("instance-id", i["instanceId"]),
                                                    ("instance-state-name", i["instanceState"]["name"]),
                                                    ("vpc-id", i.get("vpcId", "")), ("subnet-id", i.get("subnetId", ""))))]
    items, token = req.page(items)
    reservations = [{"reservationId": "r-" + i["instanceId"][2:], "ownerId": cfg.get("account_id", "123456789012"),
                     "groupSet": [], "instancesSet": [served(i)]} for i in items]
    return [("reservationSet", reservations), ("nextToken", token)]


def requested_instances(reg, req):
    """The InstanceId.N of REQ, each an instance of REG (settled first): MissingParameter without one,
    InvalidInstanceID.NotFound naming those that do not exist. (ids, {id: instance})."""
    ids = req.lists.get("InstanceId", [])
    if not ids:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter InstanceId")
    settle(reg)
    by_id = {i["instanceId"]: i for i in reg["instances"]}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise ApiError(400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist" % "', '".join(missing))
    return ids, by_id


def terminate_instances(cfg, req):
    """Each instance shuts down (its ddl-fake-nodes node is taken down: the other nodes of its cluster are
    brought up again without it, or the last one goes); terminating a terminated instance is no error."""
    out = []
    with NODES_LOCK:
        with registry(region_path(cfg), write=True) as reg:
            ids, by_id = requested_instances(reg, req)
            for iid in ids:
                i = by_id[iid]
                before = dict(i["instanceState"])
                nodes = i.get("_fake_nodes")
                if live(i) and i["instanceState"]["name"] != "shutting-down":
                    if nodes:
                        rest = [o["_fake_nodes"]["node"] for o in reg["instances"] if o is not i and live(o) and
                                o["instanceState"]["name"] != "shutting-down" and o["instanceId"] not in ids and
                                o.get("_fake_nodes", {}).get("id") == nodes["id"] and
                                o["_fake_nodes"].get("state_dir") == nodes["state_dir"]]
                        error = openstack_registry.fake_nodes_without(nodes, rest)
                        if error:
                            raise ApiError(500, "InternalError", error)
                    i["instanceState"] = {"code": STATE_CODES["shutting-down"], "name": "shutting-down"}
                    i["_since"] = time.time()
                    aws_iam.stop_imds(i)
                    aws_iam.drop_credentials(reg, iid)
                out.append({"instanceId": iid, "currentState": i["instanceState"], "previousState": before})
    return [("instancesSet", out)]


# kind: (registry list, id element, the Describe action's id list and id filter)
DESCRIBED = {
    "DescribeSecurityGroups": ("security_groups", "groupId", "GroupId", "group-id", "securityGroupInfo"),
    "DescribeSubnets": ("subnets", "subnetId", "SubnetId", "subnet-id", "subnetSet"),
    "DescribeInternetGateways": ("internet_gateways", "internetGatewayId", "InternetGatewayId", "internet-gateway-id",
                                 "internetGatewaySet"),
    "DescribeRouteTables": ("route_tables", "routeTableId", "RouteTableId", "route-table-id", "routeTableSet"),
    "DescribeVpcs": ("vpcs", "vpcId", "VpcId", "vpc-id", "vpcSet"),
    "DescribeKeyPairs": ("key_pairs", "keyPairId", "KeyPairId", "key-pair-id", "keySet"),
    "DescribePlacementGroups": ("placement_groups", "groupName", "GroupName", "group-name", "placementGroupSet"),
}
NOT_FOUND = {"security_groups": ("InvalidGroup.NotFound", "The security group '%s' does not exist"),
             "subnets": ("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist"),
             "internet_gateways": ("InvalidInternetGatewayID.NotFound", "The internetGateway ID '%s' does not exist"),
             "route_tables": ("InvalidRouteTableID.NotFound", "The routeTable ID '%s' does not exist"),
             "vpcs": ("InvalidVpcID.NotFound", "The vpc ID '%s' does not exist"),
             "key_pairs": ("InvalidKeyPair.NotFound", "The key pair '%s' does not exist"),
             "placement_groups": ("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.")}


def describe_region(cfg, req):
    kind, id_key, id_list, id_filter, set_name = DESCRIBED[req.action]
    with registry(region_path(cfg)) as reg:
        ids = req.lists.get(id_list, [])
        known = {r[id_key] for r in reg[kind]}
        missing = [i for i in ids if i not in known]
        if missing:
            code, message = NOT_FOUND[kind]
            raise ApiError(400, code, message % missing[0])
        extra = {"vpc-id": "vpcId", "group-name": "groupName", "key-name": "keyName", "strategy": "strategy"}
        items = [r for r in reg[kind] if (not ids or r[id_key] in ids) and tags_match(req, r) and req.matches(id_filter, r[id_key])
                 and all(req.matches(f, r.get(k, "")) for f, k in extra.items() if f in FILTERS[req.action])]
    if req.action in MAX_RESULTS:
        items, token = req.page(items)
        return [(set_name, [served(r) for r in items]), ("nextToken", token)]
    return [(set_name, [served(r) for r in items])]


def find_in(reg, kind, ident):
    key = {"security_groups": "groupId", "subnets": "subnetId", "internet_gateways": "internetGatewayId",
           "route_tables": "routeTableId", "vpcs": "vpcId", "key_pairs": "keyPairId", "placement_groups": "groupName"}[kind]
    r = next((r for r in reg[kind] if r[key] == ident), None)
    if r is None:
        code, message = NOT_FOUND[kind]
        raise ApiError(400, code, message % ident)
    return r


def dependency(what):
    return ApiError(400, "DependencyViolation", "The %s has dependencies and cannot be deleted." % what)


def changed(reg_change):
    """A Delete*/Detach*/Revoke* action over the region: REG_CHANGE(reg, req) raises or returns."""
    def action(cfg, req):
        with registry(region_path(cfg), write=True) as reg:
            settle(reg)
            reg_change(reg, req)
        return [("return", True)]
    return action


def need(req, name):
    value = req.scalars.get(name)
    if not value:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter %s" % name)
    return value


def revoke_ingress(reg, req):
    group = find_in(reg, "security_groups", need(req, "GroupId"))
    perms = {}
    for name, value in req.scalars.items():
        m = re.match(r"^IpPermissions\.(\d+)\.(.*)$", name)
        if m:
            perms.setdefault(int(m.group(1)), {})[m.group(2)] = value
    for p in perms.values():
        refs = sorted(v for k, v in p.items() if k.startswith("Groups."))
        match = [r for r in group["ipPermissions"] if r["ipProtocol"] == p.get("IpProtocol") and
                 str(r.get("fromPort", "")) == p.get("FromPort", "") and str(r.get("toPort", "")) == p.get("ToPort", "") and
                 sorted(g["groupId"] for g in r.get("groups", [])) == refs]
        if not match:
            raise ApiError(400, "InvalidPermission.NotFound",
                           "The specified rule does not exist in this security group.")
        group["ipPermissions"] = [r for r in group["ipPermissions"] if r not in match]


def delete_security_group(reg, req):
    gid = need(req, "GroupId")
    find_in(reg, "security_groups", gid)
    used = any(live(i) and any(g["groupId"] == gid for g in i.get("groupSet", [])) for i in reg["instances"])
    named = any(o["groupId"] != gid and any(g["groupId"] == gid for r in o.get("ipPermissions", []) for g in r.get("groups", []))
                for o in reg["security_groups"])
    if used or named:
        raise ApiError(400, "DependencyViolation", "resource %s has a dependent object" % gid)
    reg["security_groups"] = [g for g in reg["security_groups"] if g["groupId"] != gid]


def delete_subnet(reg, req):
    sid = need(req, "SubnetId")
    find_in(reg, "subnets", sid)
    if any(live(i) and i.get("subnetId") == sid for i in reg["instances"]):
        raise dependency("subnet '%s'" % sid)
    reg["subnets"] = [s for s in reg["subnets"] if s["subnetId"] != sid]
    for rt in reg["route_tables"]:
        rt["associationSet"] = [a for a in rt.get("associationSet", []) if a.get("subnetId") != sid]


def detach_internet_gateway(reg, req):
    gw = find_in(reg, "internet_gateways", need(req, "InternetGatewayId"))
    vpc = need(req, "VpcId")
    if not any(a["vpcId"] == vpc for a in gw.get("attachmentSet", [])):
        raise ApiError(400, "Gateway.NotAttached", "resource %s is not attached to network %s" % (gw["internetGatewayId"], vpc))
    if any(live(i) and i.get("vpcId") == vpc and i.get("ipAddress") for i in reg["instances"]):
        raise ApiError(400, "DependencyViolation", "Network %s has some mapped public address(es). Please unmap those "
                       "public address(es) before detaching the gateway." % vpc)
    gw["attachmentSet"] = [a for a in gw["attachmentSet"] if a["vpcId"] != vpc]


def delete_internet_gateway(reg, req):
    gw = find_in(reg, "internet_gateways", need(req, "InternetGatewayId"))
    if gw.get("attachmentSet"):
        raise dependency("internetGateway '%s'" % gw["internetGatewayId"])
    reg["internet_gateways"] = [g for g in reg["internet_gateways"] if g is not gw]


def delete_route_table(reg, req):
    rt = find_in(reg, "route_tables", need(req, "RouteTableId"))
    if rt.get("associationSet"):
        raise dependency("routeTable '%s'" % rt["routeTableId"])
    reg["route_tables"] = [r for r in reg["route_tables"] if r is not rt]


def delete_vpc(reg, req):
    vid = need(req, "VpcId")
    find_in(reg, "vpcs", vid)
    in_vpc = [r for kind in ("subnets", "security_groups") for r in reg[kind] if r.get("vpcId") == vid]
    in_vpc += [r for r in reg["route_tables"] if r.get("vpcId") == vid and
               not any(a.get("main") for a in r.get("associationSet", []))]
    in_vpc += [g for g in reg["internet_gateways"] if any(a["vpcId"] == vid for a in g.get("attachmentSet", []))]
    if in_vpc:
        raise dependency("vpc '%s'" % vid)
    reg["route_tables"] = [r for r in reg["route_tables"] if r.get("vpcId") != vid]  # its main route table
    reg["vpcs"] = [v for v in reg["vpcs"] if v["vpcId"] != vid]


def delete_key_pair(reg, req):
    ident, name = req.scalars.get("KeyPairId"), req.scalars.get("KeyName")
    if not ident and not name:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter KeyName or KeyPairId")
    reg["key_pairs"] = [k for k in reg["key_pairs"] if k["keyPairId"] != ident and k["keyName"] != name]


def delete_placement_group(reg, req):
    name = need(req, "GroupName")
    find_in(reg, "placement_groups", name)
    if any(live(i) and i.get("placement", {}).get("groupName") == name for i in reg["instances"]):
        raise ApiError(400, "InvalidPlacementGroup.InUse", "The placement group '%s' is in use and may not be deleted." % name)
    reg["placement_groups"] = [g for g in reg["placement_groups"] if g["groupName"] != name]


def create_tags(reg, req):
    """API_CreateTags: Tag.N on every ResourceId.N (instances here); a key of 1-128 characters not starting
    "aws:", a value of at most 256; an existing key's value replaced."""
    ids = req.lists.get("ResourceId", [])
    if not ids:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter ResourceId")
    tags = {}
    for name, value in req.scalars.items():
        if name.startswith("Tag.") and name.endswith(".Key"):
            tags[value] = req.scalars.get(name[:-4] + ".Value", "")
    if not tags:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter Tag")
    for k, v in tags.items():
        if not 1 <= len(k) <= 128 or k.lower().startswith("aws:"):
            raise ApiError(400, "InvalidParameterValue", "Tag keys starting with 'aws:' are reserved for internal use"
                           if k.lower().startswith("aws:") else "Tag key exceeds the maximum length of 128 characters")
        if len(v) > 256:
            raise ApiError(400, "InvalidParameterValue", "Tag value exceeds the maximum length of 256 characters")
    by_id = {i["instanceId"]: i for i in reg["instances"]}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise ApiError(400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist" % "', '".join(missing))
    for iid in ids:
        have = {t["key"]: t["value"] for t in by_id[iid].get("tagSet", [])}
        have.update(tags)
        by_id[iid]["tagSet"] = tag_set(have)


EC2_ACTIONS = {
    "DescribeInstanceTypeOfferings": describe_instance_type_offerings,
    "DescribeImages": describe_images,
    "DescribeInstanceTypes": describe_instance_types,
    "DescribeInstances": describe_instances,
    "TerminateInstances": terminate_instances,
    "StopInstances": stop_or_start(False),
    "StartInstances": stop_or_start(True),
    "CreateTags": changed(create_tags),
    "RevokeSecurityGroupIngress": changed(revoke_ingress),
    "DeleteSecurityGroup": changed(delete_security_group),
    "DeleteSubnet": changed(delete_subnet),
    "DetachInternetGateway": changed(detach_internet_gateway),
    "DeleteInternetGateway": changed(delete_internet_gateway),
    "DeleteRouteTable": changed(delete_route_table),
    "DeleteVpc": changed(delete_vpc),
    "DeleteKeyPair": changed(delete_key_pair),
    "DeletePlacementGroup": changed(delete_placement_group),
}
EC2_ACTIONS.update({action: describe_region for action in DESCRIBED})


def ec2_dispatch(cfg, params):
    """params: list of (name, value). Returns (action, XML body); raises ApiError."""
    names = [n for n, _ in params]
    values = dict(params)
    if "Action" not in values:
        raise ApiError(400, "MissingAction", "The request must contain the parameter Action (stand-in wording).")
    action = values["Action"]
    if action not in EC2_ACTIONS:
        raise ApiError(400, "InvalidAction", "The action %s is not valid for this web service." % action)
    if "Version" not in values:
        raise ApiError(400, "MissingParameter", "The request must contain the parameter Version (stand-in wording).")
    if values["Version"] != EC2_VERSION:
        raise ApiError(400, "NoSuchVersion", "The requested version (%s) of service AmazonEC2 does not exist "
                       "(the stand-in serves only %s)" % (values["Version"], EC2_VERSION))
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ApiError(400, "InvalidParameterValue", "The parameter %s is given more than once (stand-in wording)." % dup)
    req = Ec2Request(action, params)
    if cfg.get("_caller_role"):  # signed with an instance profile's credentials: its role's policy decides
        with registry(region_path(cfg)) as reg:
            aws_iam.authorize(reg, cfg["_caller_role"], cfg["region"], req)
    if req.flag("DryRun"):
        raise ApiError(412, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
    parts = EC2_ACTIONS[action](cfg, req)
    return action, parts
