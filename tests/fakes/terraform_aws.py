"""The AWS provider of the Terraform stand-in (tests/fakes/terraform): the mode of a module that configures
`provider "aws"` (src/targets/aws/terraform).

Follows:
  - hashicorp/aws provider documentation (registry.terraform.io/providers/hashicorp/aws/latest/docs),
    "Authentication and Configuration": the credential chain (environment keys, else the profile of
    var.profile / AWS_PROFILE / default in AWS_SHARED_CREDENTIALS_FILE or AWS_CONFIG_FILE), without which
    the provider cannot configure ("No valid credential sources found"); AWS_ENDPOINT_URL_EC2 /
    AWS_ENDPOINT_URL and AWS_CA_BUNDLE for the endpoint.
  - The resource documentation for the attributes modelled here: aws_key_pair public_key: new resource
    (replace); aws_instance instance_type: updated in place (the instance is stopped and started), ami:
    replace; the ids of aws_key_pair and aws_placement_group are their names; aws_ec2_instance_state (its id
    the instance's; a new instance_id forces a new one): state "running" / "stopped" updated in place (StartInstances / StopInstances, then the
    provider waits for the state; its errors "starting EC2 Instance (ID)" / "stopping EC2 Instance (ID)"),
    created without a call when the instance is already in the state, deleted without a call; its Read
    (Terraform's refresh before every plan, and before apply acts) takes the instance's state from EC2, so a
    state changed behind Terraform's back (the master's idle clock stopped the instances) is a change.
  - The module's validation blocks and preconditions (src/targets/aws/terraform/variables.tf, security.tf,
    main.tf; those of src/terraform/module/common.tf are in tf_cli.py), as far as a stand-in can evaluate
    them, and the provider's refusal of security group names beginning "sg-" (aws_security_group, "name").
  - The EC2 API Reference's Describe* item shapes, through tests/fakes/aws_region.py.

The simulated region: with FAKE_AWS_RESOURCES set (the registry tests/fakes/aws_api.py serves;
tests/fakes/aws_region.py has the format), the module's resources are also written there as the EC2 API's Describe*
actions show them, each with a fresh EC2 id that is also the id the state records: the VPC (with its main
route table), subnet, internet gateway (attached), route table with its association, the two security
groups with their rules, the key pair, placement group and the instances (running, launchTime, groupSet,
subnetId, vpcId, the module's tags ddl-cluster, ddl-managed, Name, ddl-role and ddl-state =
var.state_dir); with var.expires every resource also carries ddl-expires (var.expires of src/terraform/module/common.tf),
and a changed var.expires updates the instances' tag in place (the tag of the instances is what ddl gc reads;
the stand-in models no other in-place tag update). Deletes take them out again; an instance is terminated and stays listed, as EC2 lists
terminated instances for a while. Every instance records its node in its private "_fake_nodes", so that an
instance terminated through the API takes its node with it. With var.node_credential (iam.tf): the IAM role,
its inline policy and the instance profile (tests/fakes/aws_iam.py follows the IAM API Reference), the
profile on the master (iamInstanceProfile) with its temporary credentials and its metadata service
(tests/fakes/aws_imds.py) inside the master's node; the output node_ids.
"""
import datetime
import hashlib
import json
import os
import re

from tf_cli import (CloudError, api_module, fail, key_digest, node_power, nodes_dir, registry_from_env,
                    ssh_from_anywhere, state_id)

NAME = "aws"
LOCK = ("registry.terraform.io/hashicorp/aws", "5.100.0")
INSTALL = "hashicorp/aws v5.100.0"
DATA_SOURCE = "data.aws_ami.node"
INSTANCE = "aws_instance"
CREATE_SERVER_ERROR = "creating EC2 Instance"
DELETE_SERVER_ERROR = "deleting EC2 Instance"
# FAKE_TF_FAIL_APPLY: the instance the apply fails at, with the API's refusal.
APPLY_FAILURE = ("aws_instance.worker[0]", CREATE_SERVER_ERROR, "operation error EC2: RunInstances, https response error StatusCode: 400, RequestID: 0f5c7f4e-1b1a-4c1e-9d7e-000000000000, api error "
                 "VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 8 allows for the instance bucket that the specified instance type belongs to.")
# FAKE_TF_FAIL_DESTROY: the resource a destroy fails at (address prefix), with the API's refusal.
DESTROY_FAILURE = ("aws_security_group.", "deleting Security Group (sg-0123456789abcdef0)", "operation error EC2: DeleteSecurityGroup, "
                   "https response error StatusCode: 400, api error DependencyViolation: resource sg-0123456789abcdef0 has a dependent object")
AWS_ACCOUNT = "123456789012"
DEFAULT_VPC, DEFAULT_SUBNET = "vpc-0default000000000", "subnet-0default00000000"


# The validation blocks of the AWS module's own variables (src/targets/aws/terraform/variables.tf).
VALIDATIONS = {
    "region": (lambda v: re.match(r"^[a-z]{2}(-[a-z]+)+-[0-9]+$", v), "region must be an AWS region name such as us-east-1 or eu-central-1."),
    "profile": (lambda v: re.match(r"^[A-Za-z0-9_.@+-]*$", v), "profile must be a profile name (letters, digits and _ . @ + -), or empty."),
    "ami_id": (lambda v: v == "" or re.match(r"^ami-([0-9a-f]{8}|[0-9a-f]{17})$", v), "ami_id must be an AMI id such as ami-0123456789abcdef0, or empty."),
    "ami_owners": (lambda v: len(v) > 0 and all(re.match(r"^([0-9]{12}|amazon|aws-marketplace|self)$", o) for o in v),
                   "ami_owners must list at least one 12-digit account id or one of amazon, aws-marketplace, self."),
    "ami_name_filter": (lambda v: v.strip() != "", "ami_name_filter must not be empty or blank."),
    "master_instance_type": (lambda v: re.match(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$", v), "master_instance_type must be an EC2 instance type such as g5.xlarge."),
    "worker_instance_type": (lambda v: re.match(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$", v), "worker_instance_type must be an EC2 instance type such as g5.xlarge."),
    "root_volume_type": (lambda v: v in ("gp3", "gp2"), "root_volume_type must be gp3 or gp2."),
    "availability_zone": (lambda v: v == "" or re.match(r"^[a-z]{2}(-[a-z]+)+-[0-9]+[a-z]$", v),
                          "availability_zone must be a zone name such as us-east-1a, or empty."),
    "spot_max_price": (lambda v: v == "" or re.match(r"^[0-9]+(\.[0-9]+)?$", v), 'spot_max_price must be a price such as "0.50", or empty.'),
}
DEFAULTS = {"profile": "", "ami_id": "", "ami_owners": ["amazon"],
            "ami_name_filter": "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) *", "root_volume_type": "gp3",
            "use_default_vpc": False, "availability_zone": "", "spot": False, "spot_max_price": "",
            "placement_group": False}


def check_env(json_mode, values):
    """The AWS provider's credential chain (environment keys, else the shared files' profile); without any it
    cannot configure. With AWS_ENDPOINT_URL_EC2 pointing at tests/fakes/aws_api.py the keys are also checked
    there with one signed request, as the provider's first call would."""
    key, secret, token = os.environ.get("AWS_ACCESS_KEY_ID", ""), os.environ.get("AWS_SECRET_ACCESS_KEY", ""), \
        os.environ.get("AWS_SESSION_TOKEN", "")
    profile = values.get("profile") or os.environ.get("AWS_PROFILE") or "default"
    if values.get("profile") or not (key and secret):
        import configparser
        home = os.path.expanduser("~")
        key = secret = token = ""
        for path, section in ((os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or home + "/.aws/credentials", profile),
                              (os.environ.get("AWS_CONFIG_FILE") or home + "/.aws/config",
                               profile if profile == "default" else "profile " + profile)):
            cp = configparser.RawConfigParser()
            cp.read(path)
            if cp.has_section(section) and cp.has_option(section, "aws_access_key_id"):
                key, secret = cp.get(section, "aws_access_key_id"), cp.get(section, "aws_secret_access_key", fallback="")
                token = cp.get(section, "aws_session_token", fallback="")
                break
    if not key or not secret:
        fail(json_mode, "No valid credential sources found",
             'with provider["registry.terraform.io/hashicorp/aws"]\n\nPlease see https://registry.terraform.io/providers/'
             'hashicorp/aws/latest/docs#authentication-and-configuration for more information about providing '
             'credentials.\n\nError: failed to refresh cached credentials, no EC2 IMDS role found')
    endpoint = os.environ.get("AWS_ENDPOINT_URL_EC2") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        status, body = signed_ec2_call(endpoint, values["region"], key, secret, token)
        if status != 200:
            code = re.search(r"<Code>([^<]*)</Code>", body)
            fail(json_mode, "Retrieving AWS account details: validating provider credentials",
                 "api error %s: %s" % (code.group(1) if code else status, body[-300:]))


def signed_ec2_call(endpoint, region, key, secret, token):
    """One SigV4-signed DescribeImages to the stand-in, signed with its own signer (tests/fakes/aws_sigv4.py)."""
    import ssl
    import urllib.request
    sigv4 = api_module("aws_sigv4")
    body = b"Action=DescribeImages&Version=2016-11-15&Owner.1=self"
    host = endpoint.split("://", 1)[1].rstrip("/")
    amz_date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    headers = {"host": host, "x-amz-date": amz_date, "content-type": "application/x-www-form-urlencoded; charset=utf-8"}
    if token:
        headers["x-amz-security-token"] = token
    signed = sorted(headers)
    creq = sigv4.canonical_request("POST", "/", "", {k: [v] for k, v in headers.items()}, signed, body)
    scope = "%s/%s/ec2/aws4_request" % (amz_date[:8], region)
    sig = sigv4.signature(secret, amz_date[:8], region, "ec2", sigv4.string_to_sign(amz_date, scope, creq))
    req = urllib.request.Request(endpoint.rstrip("/") + "/", data=body, method="POST")
    for k, v in headers.items():
        if k != "host":
            req.add_header(k, v)
    req.add_header("Authorization", "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s"
                   % (key, scope, ";".join(signed), sig))
    ctx = ssl.create_default_context(cafile=os.environ.get("AWS_CA_BUNDLE") or None)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def preconditions(json_mode, values):
    """What fails an AWS plan before anything is created: the provider's own check of the security groups'
    names (aws_security_group "name": "cannot begin with sg-"), then the module's preconditions."""
    if values["cluster_name"].startswith("sg-"):
        fail(json_mode, "invalid value for name (cannot begin with sg-)", "aws_security_group.nodes")
    if not re.match(r"^(ssh-ed25519|ssh-rsa) ", values["public_key"].strip()):
        fail(json_mode, "Resource precondition failed",
             'public_key must be an OpenSSH ed25519 or RSA public key ("ssh-ed25519 AAAA..."): EC2 imports no '
             'other key type.', "aws_key_pair.cluster")
    ssh_from_anywhere(json_mode, values, "aws_security_group.ssh")
    if values["spot"] and values["placement_group"]:
        fail(json_mode, "Resource precondition failed",
             "placement_group and spot cannot both be true: a cluster placement group needs every node's capacity "
             "in one zone at once, which Spot rarely has (the launch fails with InsufficientInstanceCapacity). Set "
             "one of them to false.", "aws_placement_group.cluster[0]")
    if not values["use_default_vpc"] and not 16 <= int(values["network_cidr"].split("/")[1]) <= 28:
        fail(json_mode, "Resource precondition failed",
             "network_cidr is %s: a VPC's network must have a /16 to /28 prefix, such as 10.42.0.0/16."
             % values["network_cidr"], "aws_vpc.cluster[0]")
    v = values["root_volume_gb"]
    if not (8 <= v <= 16384 and v == int(v)):
        fail(json_mode, "Resource precondition failed",
             "root_volume_gb is %s: it must be a whole number of GiB from 8 (or the AMI's root snapshot) to 16384."
             % v, "aws_instance.master")
    if len(values["state_dir"]) > 256:
        fail(json_mode, "Resource precondition failed",
             "state_dir must be at most 256 characters: it is the value of the ddl-state tag, and EC2 tag values "
             "are at most 256.", "aws_instance.master")
    if values["spot"] and values["stopped"]:
        fail(json_mode, "Resource precondition failed", "One-time Spot Instances cannot be stopped; destroy the cluster "
             "instead.", "aws_ec2_instance_state.master")


def desired(v):
    res = ["aws_key_pair.cluster", "aws_security_group.nodes", "aws_security_group.ssh",
           "aws_vpc_security_group_ingress_rule.internal", "aws_vpc_security_group_egress_rule.ipv4",
           "aws_vpc_security_group_egress_rule.ipv6"]
    res += ['aws_vpc_security_group_ingress_rule.ssh_%s["%s"]' % ("ipv6" if ":" in c else "ipv4", c)
            for c in sorted(set(v["allowed_cidrs"]))]
    if not v["use_default_vpc"]:
        res += ["aws_vpc.cluster[0]", "aws_subnet.cluster[0]", "aws_internet_gateway.cluster[0]",
                "aws_route_table.cluster[0]", "aws_route_table_association.cluster[0]"]
    if v["placement_group"]:
        res.append("aws_placement_group.cluster[0]")
    if v.get("node_credential"):
        res += list(api_module("aws_iam").TF_IAM)
    res.append("aws_instance.master")
    res += ["aws_instance.worker[%d]" % i for i in range(int(v["worker_count"]))]
    res.append("aws_ec2_instance_state.master")
    res += ["aws_ec2_instance_state.worker[%d]" % i for i in range(int(v["worker_count"]))]
    return res


def replaced_with(addr, v):
    """-replace of an instance replaces its aws_ec2_instance_state (instance_id forces a new resource)."""
    return [addr.replace("aws_instance.", "aws_ec2_instance_state.", 1)] if addr.startswith("aws_instance.") else []


def attributes(addr, v):
    """{attribute: (value, forces_replacement)} of the resources whose changes ddl's users see."""
    image = v["ami_id"] or v["ami_name_filter"]
    if addr == "aws_key_pair.cluster":
        return {"public_key": (key_digest(v), True)}
    if addr == "aws_instance.master":
        return {"instance_type": (v["master_instance_type"], False), "ami": (image, True),
                "tags.ddl-expires": (v["expires"], False),
                "iam_instance_profile": (v["cluster_name"] + "-master" if v.get("node_credential") else "", False)}
    if addr.startswith("aws_instance.worker["):
        return {"instance_type": (v["worker_instance_type"], False), "ami": (image, True),
                "tags.ddl-expires": (v["expires"], False)}
    if addr.startswith("aws_ec2_instance_state."):
        return {"state": (instance_state(v), False)}
    return {}


def registry_path():
    """The simulated region's registry (FAKE_AWS_RESOURCES), or None without one."""
    return registry_from_env("FAKE_AWS_RESOURCES")


def aws_region():
    """tests/fakes/aws_region.py (the region's registry and EC2's item shapes) with a simulated region."""
    return api_module("aws_region") if registry_path() else None


def aws_tags(values, name, **extra):
    """The module's local.tags (with ddl-expires where var.expires is set) and the resource's own."""
    t = {"ddl-cluster": values["cluster_name"], "ddl-managed": "true", "Name": name}
    if values.get("expires"):
        t["ddl-expires"] = values["expires"]
    t.update(extra)
    return [{"key": k, "value": v} for k, v in sorted(t.items())]


def aws_find(reg, kind, key, ident):
    return next((r for r in reg[kind] if r.get(key) == ident), None)


def create(addr, st, values):
    """Adds what ADDR creates to the simulated region; returns the id the provider records, or None."""
    api = aws_region()
    if not api:
        return None
    c, kind = values["cluster_name"], addr.split(".")[0]
    key = addr[addr.index("[") + 1:-1] if addr.endswith("]") else None
    sid = lambda a: state_id(st, a)  # noqa: E731
    with api.registry(registry_path(), write=True) as reg:
        vpc = sid("aws_vpc.cluster[0]") or (DEFAULT_VPC if values["use_default_vpc"] else "")
        if kind == "aws_key_pair":
            if aws_find(reg, "key_pairs", "keyName", c + "-key"):
                raise CloudError("importing EC2 Key Pair (%s-key)" % c, "operation error EC2: ImportKeyPair, https response "
                                 "error StatusCode: 400, api error InvalidKeyPair.Duplicate: The keypair already exists")
            reg["key_pairs"].append({"keyPairId": api.new_id("key"), "keyName": c + "-key", "keyType": "ed25519",
                                     "keyFingerprint": hashlib.sha256(values["public_key"].encode()).hexdigest()[:43] + "=",
                                     "tagSet": aws_tags(values, c + "-key")})
            return c + "-key"  # the provider's id of a key pair is its name
        if kind == "aws_security_group":
            name = c + "-" + addr.split(".")[1]
            r = {"ownerId": AWS_ACCOUNT, "groupName": name, "groupId": api.new_id("sg"), "groupDescription": name,
                 "vpcId": vpc, "ipPermissions": [], "ipPermissionsEgress": [], "tagSet": aws_tags(values, name), "_rules": {}}
            reg["security_groups"].append(r)
            return r["groupId"]
        if kind in ("aws_vpc_security_group_ingress_rule", "aws_vpc_security_group_egress_rule"):
            name = addr.split(".")[1].split("[")[0]
            group = aws_find(reg, "security_groups", "groupId",
                             sid("aws_security_group." + ("ssh" if name.startswith("ssh") else "nodes")))
            if group is None:
                return None
            if name == "internal":
                perm = {"ipProtocol": "-1", "groups": [{"userId": AWS_ACCOUNT, "groupId": group["groupId"]}]}
            elif name.startswith("ssh"):
                cidr = json.loads(key)
                ranges = {"ipv6Ranges": [{"cidrIpv6": cidr}]} if ":" in cidr else {"ipRanges": [{"cidrIp": cidr}]}
                perm = dict({"ipProtocol": "tcp", "fromPort": 22, "toPort": 22}, **ranges)
            else:
                perm = {"ipProtocol": "-1", **({"ipv6Ranges": [{"cidrIpv6": "::/0"}]} if name == "ipv6"
                                               else {"ipRanges": [{"cidrIp": "0.0.0.0/0"}]})}
            side = "ipPermissionsEgress" if kind.endswith("egress_rule") else "ipPermissions"
            group[side].append(perm)
            rule = api.new_id("sgr")
            group["_rules"][rule] = [side, perm]
            return rule
        if kind == "aws_vpc":
            r = {"vpcId": api.new_id("vpc"), "cidrBlock": values["network_cidr"], "state": "available", "isDefault": False,
                 "ownerId": AWS_ACCOUNT, "tagSet": aws_tags(values, c + "-vpc")}
            reg["vpcs"].append(r)
            main = api.new_id("rtb")
            reg["route_tables"].append({"routeTableId": main, "vpcId": r["vpcId"], "ownerId": AWS_ACCOUNT,
                                        "routeSet": [{"destinationCidrBlock": values["network_cidr"], "gatewayId": "local"}],
                                        "associationSet": [{"routeTableAssociationId": api.new_id("rtbassoc"),
                                                            "routeTableId": main, "main": True}], "tagSet": []})
            for g in reg["security_groups"]:  # created first here; the provider would wait for the VPC
                if not g["vpcId"] and {"key": "ddl-cluster", "value": c} in g["tagSet"]:
                    g["vpcId"] = r["vpcId"]
            return r["vpcId"]
        if kind == "aws_subnet":
            r = {"subnetId": api.new_id("subnet"), "vpcId": vpc, "cidrBlock": values["network_cidr"], "state": "available",
                 "availabilityZone": values["availability_zone"] or values["region"] + "a", "mapPublicIpOnLaunch": True,
                 "tagSet": aws_tags(values, c + "-subnet")}
            reg["subnets"].append(r)
            return r["subnetId"]
        if kind == "aws_internet_gateway":
            r = {"internetGatewayId": api.new_id("igw"), "ownerId": AWS_ACCOUNT,
                 "attachmentSet": [{"vpcId": vpc, "state": "available"}], "tagSet": aws_tags(values, c + "-igw")}
            reg["internet_gateways"].append(r)
            return r["internetGatewayId"]
        if kind == "aws_route_table":
            r = {"routeTableId": api.new_id("rtb"), "vpcId": vpc, "ownerId": AWS_ACCOUNT,
                 "routeSet": [{"destinationCidrBlock": values["network_cidr"], "gatewayId": "local"},
                              {"destinationCidrBlock": "0.0.0.0/0", "gatewayId": sid("aws_internet_gateway.cluster[0]")}],
                 "associationSet": [], "tagSet": aws_tags(values, c + "-routes")}
            reg["route_tables"].append(r)
            return r["routeTableId"]
        if kind == "aws_route_table_association":
            rt = aws_find(reg, "route_tables", "routeTableId", sid("aws_route_table.cluster[0]"))
            if rt is None:
                return None
            a = {"routeTableAssociationId": api.new_id("rtbassoc"), "routeTableId": rt["routeTableId"],
                 "subnetId": sid("aws_subnet.cluster[0]"), "main": False}
            rt["associationSet"].append(a)
            return a["routeTableAssociationId"]
        if kind == "aws_placement_group":
            reg["placement_groups"].append({"groupName": c + "-nodes", "groupId": api.new_id("pg"), "strategy": "cluster",
                                            "state": "available", "tagSet": aws_tags(values, c + "-nodes")})
            return c + "-nodes"
        if kind.startswith("aws_iam_"):
            iam = api_module("aws_iam")
            try:
                return iam.tf_create(reg, addr, values, {"ddl-cluster": c, "ddl-managed": "true", **(
                    {"ddl-expires": values["expires"]} if values.get("expires") else {})})
            except iam.IamError as e:
                what, op = {"aws_iam_role": ("IAM Role", "CreateRole"), "aws_iam_role_policy": ("IAM Role Policy", "PutRolePolicy"),
                            "aws_iam_instance_profile": ("IAM Instance Profile", "CreateInstanceProfile")}[kind]
                raise CloudError("creating %s (%s-master)" % (what, c), "operation error IAM: %s, https response error "
                                 "StatusCode: %d, api error %s: %s" % (op, e.status, e.code, e.message))
        if kind == "aws_ec2_instance_state":
            ident = sid(addr.replace("aws_ec2_instance_state.", "aws_instance."))
            i = aws_find(reg, "instances", "instanceId", ident)
            if i and i["instanceState"]["name"] != instance_state(values):
                set_state(api, reg, i, ident, instance_state(values))
            return ident
        if kind == "aws_instance":
            index = None if key is None else int(key)
            node_name = "master" if index is None else "worker%d" % (index + 1)
            nodes = {n["name"]: n for n in (st.get("fake_nodes") or {}).get("nodes", [])}
            node = nodes.get(node_name, {})
            groups = [sid("aws_security_group.nodes")] + ([sid("aws_security_group.ssh")] if index is None else [])
            name = c + ("-master" if index is None else "-worker-%d" % index)
            r = {"instanceId": api.new_id("i"), "imageId": values["ami_id"] or "ami-0123456789abcdef0",
                 "instanceState": {"code": 16, "name": "running"},
                 "privateIpAddress": node.get("private_address", ""),
                 "ipAddress": node.get("public_address") if index is None else None,
                 "keyName": c + "-key",
                 "instanceType": values["master_instance_type" if index is None else "worker_instance_type"],
                 "launchTime": api.iso_now(),
                 "placement": {"availabilityZone": values["availability_zone"] or values["region"] + "a",
                               "groupName": c + "-nodes" if values["placement_group"] else None},
                 "subnetId": sid("aws_subnet.cluster[0]") or DEFAULT_SUBNET, "vpcId": vpc,
                 "groupSet": [{"groupId": g, "groupName": (aws_find(reg, "security_groups", "groupId", g) or {}).get("groupName")}
                              for g in groups if g],
                 "tagSet": aws_tags(values, name, **{"ddl-role": "master" if index is None else "worker",
                                                "ddl-state": values["state_dir"]}),
                 "_fake_nodes": {"id": c, "state_dir": nodes_dir(values, registry_path()), "node": node_name,
                                 "tool": os.environ.get("DDL_FAKE_NODES", "")}}
            if values["spot"]:
                r["instanceLifecycle"] = "spot"
            reg["instances"].append(r)
            if index is None and values.get("node_credential"):
                instance_profile(reg, r, values["cluster_name"] + "-master", node.get("netns"))
            return r["instanceId"]
    return None


def delete(addr, ident):
    """Takes what ADDR (id IDENT) made out of the simulated region; what is already gone is no error. An
    instance is terminated (its node is taken down by the caller) and stays listed."""
    api = aws_region()
    if not api:
        return
    kind = addr.split(".")[0]
    with api.registry(registry_path(), write=True) as reg:
        if kind == "aws_instance":
            i = aws_find(reg, "instances", "instanceId", ident)
            if i:
                i["instanceState"] = {"code": 48, "name": "terminated"}
                i.pop("_fake_nodes", None)
                instance_profile(reg, i, None, None)
        elif kind.startswith("aws_iam_"):
            api_module("aws_iam").tf_delete(reg, addr, ident)
        elif kind in ("aws_vpc_security_group_ingress_rule", "aws_vpc_security_group_egress_rule"):
            for g in reg["security_groups"]:
                if ident in g.get("_rules", {}):
                    side, perm = g["_rules"].pop(ident)
                    g[side] = [p for p in g[side] if p != perm]
        elif kind == "aws_route_table_association":
            for rt in reg["route_tables"]:
                rt["associationSet"] = [a for a in rt["associationSet"] if a["routeTableAssociationId"] != ident]
        elif kind == "aws_vpc":
            reg["vpcs"] = [v for v in reg["vpcs"] if v["vpcId"] != ident]
            reg["route_tables"] = [r for r in reg["route_tables"] if r["vpcId"] != ident]
        else:
            where = {"aws_key_pair": ("key_pairs", "keyName"), "aws_security_group": ("security_groups", "groupId"),
                     "aws_subnet": ("subnets", "subnetId"), "aws_internet_gateway": ("internet_gateways", "internetGatewayId"),
                     "aws_route_table": ("route_tables", "routeTableId"),
                     "aws_placement_group": ("placement_groups", "groupName")}.get(kind)
            if where:
                reg[where[0]] = [r for r in reg[where[0]] if r.get(where[1]) != ident]


def instance_profile(reg, instance, name, netns):
    """The instance profile NAME on INSTANCE (iamInstanceProfile), its credentials issued and its metadata
    service started in its node NETNS (tests/fakes/aws_iam.py); NAME None: taken off, both ended."""
    iam = api_module("aws_iam")
    iam.stop_imds(instance)
    iam.drop_credentials(reg, instance["instanceId"])
    instance.pop("_imds", None)
    instance.pop("iamInstanceProfile", None)
    p = next((p for p in reg["iam_instance_profiles"] if p["InstanceProfileName"] == name), None) if name else None
    if p is None:
        return
    instance["iamInstanceProfile"] = {"arn": p["Arn"], "id": p["InstanceProfileId"]}
    iam.issue_credentials(reg, instance)
    if netns:
        iam.start_imds(registry_path(), instance, netns)


def outputs(st, values):
    """iam.tf's output node_ids: the instances' ids, the workers first and the master last."""
    ids = {r["addr"]: r["id"] for r in st["resources"] if r["addr"].startswith(INSTANCE + ".")}
    workers = [ids["aws_instance.worker[%d]" % i] for i in range(int(values["worker_count"])) if "aws_instance.worker[%d]" % i in ids]
    if "aws_instance.master" not in ids:
        return {}
    return {"node_ids": {"sensitive": False, "type": ["tuple", ["string"] * (len(workers) + 1)],
                         "value": workers + [ids["aws_instance.master"]]}}


def instance_state(values):
    """The state the module's aws_ec2_instance_state resources take from var.stopped."""
    return "stopped" if values["stopped"] else "running"


def set_state(api, reg, instance, ident, state):
    """StopInstances / StartInstances, then the provider's wait: the instance is left stopped / running."""
    try:
        api.power_instance(reg, instance, state == "running")
    except api.ApiError as e:
        raise CloudError("%s EC2 Instance (%s)" % ("starting" if state == "running" else "stopping", ident),
                         "operation error EC2: %s, https response error StatusCode: %d, api error %s: %s"
                         % ("StartInstances" if state == "running" else "StopInstances", e.status, e.code, e.message))
    instance["instanceState"] = {"code": api.STATE_CODES[state], "name": state}


def refresh(st):
    """Terraform's refresh of aws_ec2_instance_state (its Read): the plan's view takes the instance's state."""
    api = aws_region()
    if not api:
        return
    with api.registry(registry_path()) as reg:
        for r in st["resources"]:
            if r["addr"].startswith("aws_ec2_instance_state."):
                i = aws_find(reg, "instances", "instanceId", r["id"])
                if i and i["instanceState"]["name"] in ("running", "stopped"):
                    r.setdefault("attributes", {})["state"] = i["instanceState"]["name"]


def update(addr, ident, values, before, st):
    """An instance whose type or ddl-expires tag changed in place; an instance state changed (aws_ec2_instance_state): the instance stopped or started, and its node powered off or booted (without a simulated region, the node alone)."""
    api = aws_region()
    if addr.startswith("aws_ec2_instance_state."):
        state = instance_state(values)
        if not api:
            if before.get("state", "running") != state:
                node_power(st, addr, state == "running")
            return
        with api.registry(registry_path(), write=True) as reg:
            i = aws_find(reg, "instances", "instanceId", ident)
            if i and i["instanceState"]["name"] != state:  # read again as apply's refresh does
                set_state(api, reg, i, ident, state)
        return
    if not api or not addr.startswith("aws_instance."):
        return
    with api.registry(registry_path(), write=True) as reg:
        i = aws_find(reg, "instances", "instanceId", ident)
        if i and addr.endswith(".master") and before.get("iam_instance_profile", "") != attributes(addr, values)["iam_instance_profile"][0]:
            netns = next((n.get("netns") for n in (st.get("fake_nodes") or {}).get("nodes", []) if n["name"] == "master"), None)
            instance_profile(reg, i, attributes(addr, values)["iam_instance_profile"][0] or None, netns)
        if i:
            i["instanceType"] = values["master_instance_type" if addr.endswith(".master") else "worker_instance_type"]
            tags = {t["key"]: t["value"] for t in i["tagSet"] if t["key"] != "ddl-expires"}
            if values.get("expires"):
                tags["ddl-expires"] = values["expires"]
            i["tagSet"] = [{"key": k, "value": v} for k, v in sorted(tags.items())]

