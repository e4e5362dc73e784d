"""The EC2 Query API of the AWS API stand-in (tests/fakes/aws_api.py): the request's parameters, the
instance-type, offering and image actions ddl's pre-flight reads, and the response and error bodies.

Follows:
  - "Query requests for Amazon EC2", Amazon EC2 API Reference,
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/Query-Requests.html (GET or POST, Action, Version)
    and "Common query parameters", .../APIReference/CommonParameters.html (Action and Version required).
  - Amazon EC2 API Reference, actions DescribeInstanceTypeOfferings, DescribeImages, DescribeInstanceTypes,
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeImages.html (and ..._DescribeInstanceTypes,
    ..._DescribeInstanceTypeOfferings); element names as in botocore's model ec2/2016-11-15 (xmlNamespace
    http://ec2.amazonaws.com/doc/2016-11-15, sent with a trailing slash on the wire).
  - "Error codes for the Amazon EC2 API", section "Common client error codes" and "Example error response",
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html
    (<Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>).
Where these are silent, the status or wording observed from the real services in public reports
(docs/research/aws-research.md): InvalidAction "The action X is not valid for this web service.";
UnknownParameter "The parameter X is not recognized"; InvalidAMIID.Malformed for an id not starting "ami-";
InvalidAMIID.NotFound "The image id '[ami-...]' does not exist"; InvalidInstanceType "The following supplied
instance types do not exist: [...]"; a Filter that matches nothing gives an empty set. Wording marked
"stand-in" is this file's own.
"""
import base64
import fnmatch
import hashlib
import re
from xml.sax.saxutils import escape

from aws_sigv4 import ApiError

EC2_VERSION = "2016-11-15"
EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"


LIST_PARAMS = {
    "DescribeInstanceTypeOfferings": set(),
    "DescribeImages": {"ExecutableBy", "ImageId", "Owner"},
    "DescribeInstanceTypes": {"InstanceType"},
    "DescribeInstances": {"InstanceId"},
    "TerminateInstances": {"InstanceId"},
    "StopInstances": {"InstanceId"},
    "StartInstances": {"InstanceId"},
    "CreateTags": {"ResourceId"},
    "DescribeSecurityGroups": {"GroupId", "GroupName"},
    "DescribeSubnets": {"SubnetId"},
    "DescribeInternetGateways": {"InternetGatewayId"},
    "DescribeRouteTables": {"RouteTableId"},
    "DescribeVpcs": {"VpcId"},
    "DescribeKeyPairs": {"KeyName", "KeyPairId"},
    "DescribePlacementGroups": {"GroupName", "GroupId"},
}
DESCRIBE_PAGED = {"DryRun", "MaxResults", "NextToken"}
SCALAR_PARAMS = {
    "DescribeInstanceTypeOfferings": {"DryRun", "LocationType", "MaxResults", "NextToken"},
    "DescribeImages": {"IncludeDeprecated", "IncludeDisabled", "MaxResults", "NextToken", "DryRun"},
    "DescribeInstanceTypes": {"DryRun", "MaxResults", "NextToken", "IncludeUnsupportedInRegion"},
    "DescribeInstances": DESCRIBE_PAGED,
    "TerminateInstances": {"DryRun", "Force", "SkipOsShutdown"},
    "StopInstances": {"DryRun", "Force", "Hibernate", "SkipOsShutdown"},
    "StartInstances": {"AdditionalInfo", "DryRun"},
    "CreateTags": {"DryRun"},
    "DescribeSecurityGroups": DESCRIBE_PAGED,
    "DescribeSubnets": DESCRIBE_PAGED,
    "DescribeInternetGateways": DESCRIBE_PAGED,
    "DescribeRouteTables": DESCRIBE_PAGED,
    "DescribeVpcs": DESCRIBE_PAGED,
    "DescribeKeyPairs": {"DryRun", "IncludePublicKey"},
    "DescribePlacementGroups": {"DryRun"},
    "RevokeSecurityGroupIngress": {"DryRun", "GroupId", "GroupName"},
    "DeleteSecurityGroup": {"DryRun", "GroupId", "GroupName"},
    "DeleteSubnet": {"DryRun", "SubnetId"},
    "DetachInternetGateway": {"DryRun", "InternetGatewayId", "VpcId"},
    "DeleteInternetGateway": {"DryRun", "InternetGatewayId"},
    "DeleteRouteTable": {"DryRun", "RouteTableId"},
    "DeleteVpc": {"DryRun", "VpcId"},
    "DeleteKeyPair": {"DryRun", "KeyName", "KeyPairId"},
    "DeletePlacementGroup": {"DryRun", "GroupName"},
}
# Structured parameters (API_RevokeSecurityGroupIngress: IpPermissions.N.<member>; API_CreateTags: Tag.N.Key,
# Tag.N.Value).
PATTERN_PARAMS = {
    "CreateTags": re.compile(r"^Tag\.\d+\.(Key|Value)$"),
    "RevokeSecurityGroupIngress": re.compile(r"^IpPermissions\.\d+\.(IpProtocol|FromPort|ToPort|Groups\.\d+\.GroupId|"
                                             r"IpRanges\.\d+\.CidrIp|Ipv6Ranges\.\d+\.CidrIpv6)$"),
}
MAX_RESULTS = {"DescribeInstanceTypeOfferings": (5, 1000), "DescribeImages": (1, 1000), "DescribeInstanceTypes": (5, 100),
               "DescribeInstances": (5, 1000), "DescribeSecurityGroups": (5, 1000), "DescribeSubnets": (5, 1000),
               "DescribeInternetGateways": (5, 1000), "DescribeRouteTables": (5, 100), "DescribeVpcs": (5, 1000)}
FILTERS = {
    "DescribeInstanceTypeOfferings": {"instance-type", "location"},
    "DescribeImages": {"image-id", "name", "state", "architecture", "owner-id", "owner-alias", "is-public"},
    "DescribeInstanceTypes": {"instance-type"},
    "DescribeInstances": {"instance-id", "instance-state-name", "vpc-id", "subnet-id", "tag-key"},
    "DescribeSecurityGroups": {"group-id", "group-name", "vpc-id", "tag-key"},
    "DescribeSubnets": {"subnet-id", "vpc-id", "tag-key"},
    "DescribeInternetGateways": {"internet-gateway-id", "attachment.vpc-id", "tag-key"},
    "DescribeRouteTables": {"route-table-id", "vpc-id", "association.main", "tag-key"},
    "DescribeVpcs": {"vpc-id", "tag-key"},
    "DescribeKeyPairs": {"key-name", "key-pair-id", "tag-key"},
    "DescribePlacementGroups": {"group-name", "strategy", "tag-key"},
}
FILTER_RE = re.compile(r"^Filter\.(\d+)\.(Name|Value\.(\d+))$")
LIST_RE = re.compile(r"^([A-Za-z]+)\.(\d+)$")


class Ec2Request:
    """The parameters of one EC2 Query request, checked against the action's input shape."""

    def __init__(self, action, params):
        self.action, self.scalars, self.lists, self.filters = action, {}, {}, {}
        filters = {}
        for name, value in params:
            if name in ("Action", "Version"):
                continue
            f = FILTER_RE.match(name)
            lm = LIST_RE.match(name)
            if f:
                entry = filters.setdefault(int(f.group(1)), {"name": None, "values": {}})
                if f.group(2) == "Name":
                    entry["name"] = value
                else:
                    entry["values"][int(f.group(3))] = value
            elif lm and lm.group(1) in LIST_PARAMS.get(action, set()):
                self.lists.setdefault(lm.group(1), {})[int(lm.group(2))] = value
            elif name in SCALAR_PARAMS[action] or (action in PATTERN_PARAMS and PATTERN_PARAMS[action].match(name)):
                self.scalars[name] = value
            else:
                raise ApiError(400, "UnknownParameter", "The parameter %s is not recognized" % name)
        self.lists = {k: [v[i] for i in sorted(v)] for k, v in self.lists.items()}
        for index in sorted(filters):
            entry = filters[index]
            if entry["name"] is None:
                raise ApiError(400, "InvalidParameterValue", "The filter 'Filter.%d' has no Name (stand-in wording)." % index)
            # tag:<key> filters the resources that carry tags (every action with tag-key).
            if entry["name"] not in FILTERS[action] and not (entry["name"].startswith("tag:") and "tag-key" in FILTERS[action]):
                raise ApiError(400, "InvalidParameterValue", "The filter '%s' is invalid" % entry["name"])
            self.filters.setdefault(entry["name"], []).extend(entry["values"][i] for i in sorted(entry["values"]))

    def flag(self, name):
        value = self.scalars.get(name)
        if value is None:
            return False
        if value.lower() not in ("true", "false"):
            raise ApiError(400, "InvalidParameterValue",
                           "Invalid value '%s' for %s: a boolean is expected (stand-in wording)." % (value, name))
        return value.lower() == "true"

    def matches(self, name, value):
        """A filter with several values matches any of them; * and ? are wildcards."""
        if name not in self.filters:
            return True
        return any(fnmatch.fnmatchcase(str(value), pattern) for pattern in self.filters[name])

    def page(self, items):
        """MaxResults/NextToken over the whole result; returns (items, next_token or None)."""
        lo, hi = MAX_RESULTS[self.action]
        start = 0
        if "NextToken" in self.scalars:
            try:
                start = int(base64.urlsafe_b64decode(self.scalars["NextToken"].encode()).decode().split(":")[1])
            except (ValueError, IndexError, UnicodeDecodeError):
                raise ApiError(400, "InvalidPaginationToken", "Invalid pagination token (stand-in wording).")
        if "MaxResults" not in self.scalars:
            return items[start:], None
        try:
            size = int(self.scalars["MaxResults"])
        except ValueError:
            size = -1
        if not lo <= size <= hi:
            raise ApiError(400, "InvalidParameterValue", "Value (%s) for parameter maxResults is invalid. Expecting a "
                           "value between %d and %d (stand-in wording)." % (self.scalars["MaxResults"], lo, hi))
        end = start + size
        token = base64.urlsafe_b64encode(("page:%d" % end).encode()).decode() if end < len(items) else None
        return items[start:end], token


def xml_element(name, value):
    """<name>value</name>; value may be a str/int/bool, a list (items), a dict (children) or None (left out)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "<%s>%s</%s>" % (name, "true" if value else "false", name)
    if isinstance(value, list):
        return "<%s>%s</%s>" % (name, "".join(xml_element("item", v) for v in value), name)
    if isinstance(value, dict):
        return "<%s>%s</%s>" % (name, "".join(xml_element(k, v) for k, v in value.items()), name)
    return "<%s>%s</%s>" % (name, escape(str(value)), name)


def offered_types(cfg, include_unsupported=False):
    return {n: t for n, t in sorted(cfg.get("instance_types", {}).items()) if include_unsupported or t.get("offered", True)}


def describe_instance_type_offerings(cfg, req):
    location_type = req.scalars.get("LocationType", "region")
    if location_type not in ("region", "availability-zone", "availability-zone-id", "outpost"):
        raise ApiError(400, "InvalidParameterValue",
                       "Value (%s) for parameter locationType is invalid. (stand-in wording)" % location_type)
    items = []
    for name, t in offered_types(cfg).items():
        if location_type == "region":
            locations = [cfg["region"]]
        elif location_type == "availability-zone":
            locations = t.get("zones", [])
        else:
            locations = []  # the stand-in knows no zone ids or outposts
        for loc in locations:
            if req.matches("instance-type", name) and req.matches("location", loc):
                items.append({"instanceType": name, "locationType": location_type, "location": loc})
    items, token = req.page(items)
    return [("instanceTypeOfferingSet", items), ("nextToken", token)]


def image_item(cfg, image_id, img):
    root = img.get("root_device_name", "/dev/sda1")
    return {
        "imageId": image_id,
        "imageLocation": "%s/%s" % (img.get("owner_alias") or img.get("owner_id", cfg.get("account_id", "")),
                                    img.get("name", "")),
        "imageState": img.get("state", "available"),
        "imageOwnerId": img.get("owner_id", cfg.get("account_id", "123456789012")),
        "creationDate": img.get("creation_date", "2025-01-01T00:00:00.000Z"),
        "isPublic": img.get("public", True),
        "architecture": img.get("architecture", "x86_64"),
        "imageType": "machine",
        "imageOwnerAlias": img.get("owner_alias"),
        "name": img.get("name", ""),
        "description": img.get("description"),
        "rootDeviceType": "ebs",
        "rootDeviceName": root,
        "blockDeviceMapping": [{"deviceName": root, "ebs": {
            "snapshotId": "snap-" + hashlib.sha256(image_id.encode()).hexdigest()[:17],
            "volumeSize": img.get("root_gb", 8), "deleteOnTermination": True, "volumeType": "gp3", "encrypted": False}}],
        "virtualizationType": "hvm",
        "hypervisor": "xen",
        "enaSupport": True,
        "sriovNetSupport": "simple",
        "platformDetails": "Linux/UNIX",
        "usageOperation": "RunInstances",
        "bootMode": img.get("boot_mode"),
    }


def describe_images(cfg, req):
    images = cfg.get("images", {})
    ids = req.lists.get("ImageId", [])
    for image_id in ids:
        if not image_id.startswith("ami-"):
            raise ApiError(400, "InvalidAMIID.Malformed", 'Invalid id: "%s" (expecting "ami-...")' % image_id)
    missing = [i for i in ids if i not in images]
    if len(missing) == 1:
        raise ApiError(400, "InvalidAMIID.NotFound", "The image id '[%s]' does not exist" % missing[0])
    if missing:
        raise ApiError(400, "InvalidAMIID.NotFound",
                       "The image ids '[%s]' do not exist (stand-in wording for several)" % ", ".join(missing))
    owners = req.lists.get("Owner", [])
    account = cfg.get("account_id", "123456789012")
    items = []
    for image_id in (ids or sorted(images)):
        img = images[image_id]
        owner_id, alias = img.get("owner_id", account), img.get("owner_alias")
        if owners and not any(o in (owner_id, alias) or (o == "self" and owner_id == account) for o in owners):
            continue
        item = image_item(cfg, image_id, img)
        if all(req.matches(f, v) for f, v in (("image-id", image_id), ("name", item["name"]), ("state", item["imageState"]),
                                               ("architecture", item["architecture"]), ("owner-id", owner_id),
                                               ("owner-alias", alias or ""), ("is-public", str(item["isPublic"]).lower()))):
            items.append(item)
    req.flag("IncludeDeprecated")
    req.flag("IncludeDisabled")
    items, token = req.page(items)
    return [("imagesSet", items), ("nextToken", token)]


def instance_type_item(name, t):
    gpus = t.get("gpus")
    info = {
        "instanceType": name,
        "currentGeneration": True,
        "supportedUsageClasses": ["on-demand"] + (["spot"] if t.get("spot", True) else []),
        "supportedRootDeviceTypes": ["ebs"],
        "supportedVirtualizationTypes": ["hvm"],
        "bareMetal": name.endswith(".metal"),
        "hypervisor": None if name.endswith(".metal") else "nitro",
        "processorInfo": {"supportedArchitectures": t.get("architectures", ["x86_64"])},
        "vCpuInfo": {"defaultVCpus": t["vcpus"], "defaultCores": t.get("cores", max(1, t["vcpus"] // 2)),
                     "defaultThreadsPerCore": t.get("threads_per_core", 2 if t["vcpus"] > 1 else 1)},
        "memoryInfo": {"sizeInMiB": t.get("memory_mib", t["vcpus"] * 4096)},
        "instanceStorageSupported": False,
        "networkInfo": {"networkPerformance": t.get("network_performance", "Up to 10 Gigabit"),
                        "efaSupported": t.get("efa", False)},
        "gpuInfo": None if not gpus else {
            "gpus": [{"name": gpus["name"], "manufacturer": gpus.get("manufacturer", "NVIDIA"), "count": gpus["count"],
                      "memoryInfo": {"sizeInMiB": gpus.get("memory_mib", 0)}}],
            "totalGpuMemoryInMiB": gpus["count"] * gpus.get("memory_mib", 0)},
        "placementGroupInfo": {"supportedStrategies": t.get("placement_strategies", ["cluster", "partition", "spread"])},
    }
    return info


def describe_instance_types(cfg, req):
    include_unsupported = req.flag("IncludeUnsupportedInRegion")
    known = offered_types(cfg, include_unsupported)
    names = req.lists.get("InstanceType", [])
    if len(names) > 100:
        raise ApiError(400, "InvalidParameterValue", "At most 100 instance types can be given (stand-in wording).")
    missing = [n for n in names if n not in known]
    if missing:
        raise ApiError(400, "InvalidInstanceType",
                       "The following supplied instance types do not exist: [%s]" % ", ".join(missing))
    items = [instance_type_item(n, known[n]) for n in (names or known) if req.matches("instance-type", n)]
    items, token = req.page(items)
    return [("instanceTypeSet", items), ("nextToken", token)]



def ec2_response_body(action, request_id, parts):
    inner = "".join(xml_element(name, value) for name, value in parts)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<%sResponse xmlns="%s"><requestId>%s</requestId>%s</%sResponse>'
            % (action, EC2_NS, request_id, inner, action)).encode()


def ec2_error_body(err, request_id):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>%s</Code><Message>%s</Message>'
            '</Error></Errors><RequestID>%s</RequestID></Response>' % (escape(err.code), escape(err.message), request_id)).encode()
