#!/usr/bin/env bash
# Follows: "Query requests for Amazon EC2" (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/Query-Requests.html),
# "Error codes for the Amazon EC2 API" (…/APIReference/errors-overview.html), Service Quotas "GetServiceQuota"
# (https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_GetServiceQuota.html) and "Create a
# signed AWS API request" (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).
# For the simulated region (--resources): the EC2 API Reference pages of DescribeInstances, TerminateInstances,
# StopInstances, StartInstances,
# DescribeSecurityGroups, RevokeSecurityGroupIngress, DeleteSecurityGroup, DeleteSubnet, DetachInternetGateway,
# DeleteInternetGateway, DeleteRouteTable, DeleteVpc, DeleteKeyPair, DeletePlacementGroup
# (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_<Action>.html) and the Amazon VPC User Guide's
# "Delete your VPC" (what must go before a VPC can). For the node credential: the IAM API Reference pages of
# GetRole, ListRolePolicies, DeleteRolePolicy, DeleteRole, GetInstanceProfile, RemoveRoleFromInstanceProfile,
# DeleteInstanceProfile (https://docs.aws.amazon.com/IAM/latest/APIReference/API_<Action>.html), the IAM User
# Guide's "Policy evaluation logic" and condition keys aws:ResourceTag / aws:TagKeys, EC2's CreateTags.
# Checks tests/fakes/aws_api.py, the EC2 + Service Quotas stand-in, with requests signed by curl's own SigV4
# (--aws-sigv4, curl >= 7.75; POST with a form body for EC2 and with a JSON body for Service Quotas): good
# requests answer in the documented shapes, and what AWS refuses is refused with AWS's codes and statuses.
# The stand-in first checks its signer against AWS's published example (--self-test).
# Where botocore is installed, AWS's SDK core signs and parses a second set of requests
# (check_aws_api_with_botocore.py).
# Usage: test_aws_api.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
fakes="$src/tests/fakes"
curl --help all 2>/dev/null | grep -q -- --aws-sigv4 || { echo "SKIP: this curl has no --aws-sigv4 (needs 7.75)"; exit 77; }

# shellcheck source=SCRIPTDIR/standin_lib.sh
source "$fakes/standin_lib.sh"

KEY=AKIDDDLTEST0000000001
SECRET="ddl-test-secret/$$+$RANDOM"
TMP_KEY=ASIADDLTEST000000002
TMP_SECRET="ddl-temp-secret/$$+$RANDOM"
TOKEN="ddl-session-token-$$-$RANDOM$RANDOM"
REGION=us-east-1

# write_config [CLOCK_OFFSET_SECONDS]
write_config() {
  cat >"$work/aws.json" <<JSON
{"region": "$REGION", "account_id": "123456789012",
 "credentials": {"$KEY": {"secret": "$SECRET"},
                 "$TMP_KEY": {"secret": "$TMP_SECRET", "session_token": "$TOKEN"}},
 "instance_types": {
   "g5.xlarge": {"vcpus": 4, "cores": 2, "threads_per_core": 2, "memory_mib": 16384,
                 "gpus": {"count": 1, "name": "A10G", "manufacturer": "NVIDIA", "memory_mib": 24576},
                 "zones": ["us-east-1a", "us-east-1b"]},
   "m5.large": {"vcpus": 2, "memory_mib": 8192, "zones": ["us-east-1a"]},
   "p5.48xlarge": {"vcpus": 192, "offered": false,
                   "gpus": {"count": 8, "name": "H100", "manufacturer": "NVIDIA", "memory_mib": 81920}}},
 "images": {"ami-0123456789abcdef0": {"name": "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) 20250101",
                                      "owner_id": "898082745236", "owner_alias": "amazon", "root_gb": 75}},
 "quotas": {"ec2": {"L-DB2E81BA": {"value": 8, "name": "Running On-Demand G and VT instances", "usage_class": "G/OnDemand"},
                    "L-1216C47A": {"value": 32, "name": "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"}}},
 "clock_offset_seconds": ${1:-0}}
JSON
}

"$fakes/make_test_ca.sh" "$work/tls"
"$py" "$fakes/aws_api.py" --self-test
write_config
start_standin "$fakes/aws_api.py" "$work/aws.json"

failed=0 passed=0
# call SERVICE KEY:SECRET BODY [curl args...]: a POST signed by curl for SERVICE; sets $status and $body.
call() {
  local service=$1 user=$2 data=$3
  shift 3
  status=$(curl -sS --cacert "$work/tls/ca.pem" --aws-sigv4 "aws:amz:$REGION:$service" --user "$user" \
    -o "$work/body" -w '%{http_code}' "$@" --data "$data" "$url/")
  body=$(cat "$work/body")
}
ec2() { call ec2 "$1" "$2" "${@:3}"; }
quota() {
  call servicequotas "$1" "$2" -H "Content-Type: application/x-amz-json-1.1" \
    -H "X-Amz-Target: ServiceQuotasV20190624.${3:-GetServiceQuota}" "${@:4}"
}
# expect WHAT STATUS TEXT...: the last reply had STATUS, is well-formed XML or JSON, and holds every TEXT.
expect() {
  local what=$1 want=$2 text
  shift 2
  if [ "$status" != "$want" ]; then
    echo "FAIL: $what: status $status, expected $want"; echo "  $body"; failed=1; return
  fi
  if ! "$py" -c 'import sys, json, xml.etree.ElementTree as E
t = sys.stdin.read()
E.fromstring(t.encode()) if t.startswith("<") else json.loads(t)' <<<"$body"; then
    echo "FAIL: $what: the reply is neither well-formed XML nor JSON"; echo "  $body"; failed=1; return
  fi
  for text in "$@"; do
    if ! grep -qF -- "$text" <<<"$body"; then
      echo "FAIL: $what: reply lacks $text"; echo "  $body"; failed=1; return
    fi
  done
  passed=$((passed + 1))
  echo "ok   $what ($status)"
}
V="Version=2016-11-15"
NS='xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"'

# --- EC2: good requests --------------------------------------------------------------------------------
ec2 "$KEY:$SECRET" "Action=DescribeInstanceTypes&$V&InstanceType.1=g5.xlarge"
expect "DescribeInstanceTypes g5.xlarge" 200 "<DescribeInstanceTypesResponse $NS>" "<requestId>" \
  "<instanceTypeSet><item><instanceType>g5.xlarge</instanceType>" "<vCpuInfo><defaultVCpus>4</defaultVCpus>" \
  "<gpuInfo><gpus><item><name>A10G</name><manufacturer>NVIDIA</manufacturer><count>1</count>"
ec2 "$KEY:$SECRET" "Action=DescribeInstanceTypeOfferings&$V&LocationType=region&Filter.1.Name=instance-type&Filter.1.Value.1=g5.xlarge&Filter.1.Value.2=m5.large"
expect "DescribeInstanceTypeOfferings in the region" 200 "<DescribeInstanceTypeOfferingsResponse $NS>" \
  "<item><instanceType>g5.xlarge</instanceType><locationType>region</locationType><location>$REGION</location></item>" \
  "<item><instanceType>m5.large</instanceType>"
ec2 "$KEY:$SECRET" "Action=DescribeInstanceTypeOfferings&$V&LocationType=availability-zone&Filter.1.Name=instance-type&Filter.1.Value.1=g5.*"
expect "DescribeInstanceTypeOfferings per zone, wildcard filter" 200 "<location>us-east-1a</location>" "<location>us-east-1b</location>"
ec2 "$KEY:$SECRET" "Action=DescribeInstanceTypeOfferings&$V&LocationType=region&Filter.1.Name=instance-type&Filter.1.Value.1=p5.48xlarge"
expect "DescribeInstanceTypeOfferings of a type the region does not offer: empty set, no error" 200 "<instanceTypeOfferingSet></instanceTypeOfferingSet>"
ec2 "$KEY:$SECRET" "Action=DescribeImages&$V&ImageId.1=ami-0123456789abcdef0"
expect "DescribeImages by id" 200 "<DescribeImagesResponse $NS>" "<imageId>ami-0123456789abcdef0</imageId>" \
  "<imageState>available</imageState>" "<imageOwnerAlias>amazon</imageOwnerAlias>" "<volumeSize>75</volumeSize>"
quota "$KEY:$SECRET" '{"ServiceCode":"ec2","QuotaCode":"L-DB2E81BA"}'
expect "GetServiceQuota G and VT" 200 '"QuotaCode": "L-DB2E81BA"' '"Value": 8.0' '"Class": "G/OnDemand"'
ec2 "$TMP_KEY:$TMP_SECRET" "Action=DescribeImages&$V&ImageId.1=ami-0123456789abcdef0" -H "X-Amz-Security-Token: $TOKEN"
expect "temporary credentials with their session token (signed)" 200 "<imageId>ami-0123456789abcdef0</imageId>"
quota "$TMP_KEY:$TMP_SECRET" '{"ServiceCode":"ec2","QuotaCode":"L-1216C47A"}' GetServiceQuota -H "X-Amz-Security-Token: $TOKEN"
expect "GetServiceQuota with temporary credentials" 200 '"Value": 32.0'
# GET works too when the query is already in canonical order (curl 7.88 signs the query as given).
status=$(curl -sS --cacert "$work/tls/ca.pem" --aws-sigv4 "aws:amz:$REGION:ec2" --user "$KEY:$SECRET" -o "$work/body" \
  -w '%{http_code}' "$url/?Action=DescribeImages&ImageId.1=ami-0123456789abcdef0&$V"); body=$(cat "$work/body")
expect "GET with the query in canonical order" 200 "<imageId>ami-0123456789abcdef0</imageId>"

# --- EC2: refusals -------------------------------------------------------------------------------------
ec2 "$KEY:wrong-secret" "Action=DescribeImages&$V"
expect "EC2 bad signature" 403 "<Code>SignatureDoesNotMatch</Code>" "<RequestID>"
ec2 "AKIDUNKNOWN000000000:$SECRET" "Action=DescribeImages&$V"
expect "EC2 unknown access key" 401 "<Code>AuthFailure</Code>" "AWS was not able to validate the provided access credentials"
ec2 "$TMP_KEY:$TMP_SECRET" "Action=DescribeImages&$V"
expect "EC2 temporary key without its session token" 401 "<Code>AuthFailure</Code>"
ec2 "$TMP_KEY:$TMP_SECRET" "Action=DescribeImages&$V" -H "X-Amz-Security-Token: not-$TOKEN"
expect "EC2 temporary key with a wrong session token" 401 "<Code>AuthFailure</Code>"
call ec2 "$KEY:$SECRET" "Action=DescribeImages&$V" --aws-sigv4 "aws:amz:eu-west-1:ec2"
expect "EC2 request scoped to another region" 403 "<Code>SignatureDoesNotMatch</Code>" "not 'eu-west-1'"
status=$(curl -sS --cacert "$work/tls/ca.pem" --aws-sigv4 "aws:amz:$REGION:ec2" --user "$KEY:$SECRET" -o "$work/body" \
  -w '%{http_code}' "$url/?$V&Action=DescribeImages"); body=$(cat "$work/body")
expect "GET with an unsorted query (curl 7.88 does not canonicalize it; AWS refuses it the same way)" 403 "<Code>SignatureDoesNotMatch</Code>"
status=$(curl -sS --cacert "$work/tls/ca.pem" -o "$work/body" -w '%{http_code}' --data "Action=DescribeImages&$V" "$url/")
body=$(cat "$work/body")
expect "EC2 unsigned request" 403 "<Code>MissingAuthenticationToken</Code>"
ec2 "$KEY:$SECRET" "Action=DescribeImages&$V&ImageId.1=image-9ad76sd1"
expect "malformed AMI id" 400 "<Code>InvalidAMIID.Malformed</Code>" 'Invalid id: "image-9ad76sd1" (expecting "ami-...")'
ec2 "$KEY:$SECRET" "Action=DescribeImages&$V&ImageId.1=ami-0fedcba9876543210"
expect "absent AMI" 400 "<Code>InvalidAMIID.NotFound</Code>" "The image id '[ami-0fedcba9876543210]' does not exist"
ec2 "$KEY:$SECRET" "Action=DescribeInstanceTypes&$V&InstanceType.1=g5.xlarge&InstanceType.2=i8ge.xlarge"
expect "unknown instance type" 400 "<Code>InvalidInstanceType</Code>" "The following supplied instance types do not exist: [i8ge.xlarge]"
ec2 "$KEY:$SECRET" "Action=DescribeInstanceTypes&$V&InstanceType.1=p5.48xlarge"
expect "instance type the region does not offer" 400 "<Code>InvalidInstanceType</Code>"
ec2 "$KEY:$SECRET" "Action=RunInstances&$V"
expect "unknown Action" 400 "<Code>InvalidAction</Code>" "The action RunInstances is not valid for this web service."
ec2 "$KEY:$SECRET" "Action=DescribeImages"
expect "missing Version" 400 "<Code>MissingParameter</Code>"
ec2 "$KEY:$SECRET" "Action=DescribeImages&Version=2099-01-01"
expect "unknown Version" 400 "<Code>NoSuchVersion</Code>"
ec2 "$KEY:$SECRET" "Action=DescribeImages&$V&ImageIds.1=ami-0123456789abcdef0"
expect "parameter the action does not have" 400 "<Code>UnknownParameter</Code>" "The parameter ImageIds.1 is not recognized"
ec2 "$KEY:$SECRET" "Action=DescribeInstanceTypeOfferings&$V&Filter.1.Name=instance-types&Filter.1.Value.1=g5.xlarge"
expect "filter the action does not have" 400 "<Code>InvalidParameterValue</Code>" "The filter 'instance-types' is invalid"
ec2 "$KEY:$SECRET" "Action=DescribeImages&$V&DryRun=true"
expect "DryRun" 412 "<Code>DryRunOperation</Code>"

# --- Service Quotas: refusals --------------------------------------------------------------------------
quota "$KEY:wrong-secret" '{"ServiceCode":"ec2","QuotaCode":"L-DB2E81BA"}'
expect "Service Quotas bad signature" 403 '"__type": "InvalidSignatureException"' "does not match the signature you provided"
quota "AKIDUNKNOWN000000000:$SECRET" '{"ServiceCode":"ec2","QuotaCode":"L-DB2E81BA"}'
expect "Service Quotas unknown access key" 403 '"__type": "UnrecognizedClientException"'
quota "$KEY:$SECRET" '{"ServiceCode":"ec2","QuotaCode":"L-00000000"}'
expect "unknown quota code" 400 '"__type": "NoSuchResourceException"'
quota "$KEY:$SECRET" '{"ServiceCode":"EC2","QuotaCode":"L-DB2E81BA"}'
expect "service codes are case-sensitive" 400 '"__type": "NoSuchResourceException"' "the specified service does not exist"
quota "$KEY:$SECRET" '{"ServiceCode":"ec2"}'
expect "missing QuotaCode" 400 '"__type": "IllegalArgumentException"'
quota "$KEY:$SECRET" '{"ServiceCode":"ec2","QuotaCode":"L-DB2E81BA"}' ListServiceQuotasTypo
expect "unknown X-Amz-Target" 404 '"__type": "UnknownOperationException"'

# --- clock skew: the stand-in's clock 20 minutes ahead -------------------------------------------------
write_config 1200
ec2 "$KEY:$SECRET" "Action=DescribeImages&$V"
expect "EC2 request dated more than 15 minutes off" 400 "<Code>RequestExpired</Code>"
quota "$KEY:$SECRET" '{"ServiceCode":"ec2","QuotaCode":"L-DB2E81BA"}'
expect "Service Quotas request dated more than 15 minutes off" 400 '"__type": "RequestExpired"'
write_config 600
ec2 "$KEY:$SECRET" "Action=DescribeImages&$V&ImageId.1=ami-0123456789abcdef0"
expect "10 minutes off is still accepted" 200 "<imageId>ami-0123456789abcdef0</imageId>"

# --- the simulated region: what ddl gc lists and deletes, refused in the order EC2 refuses it ----------
kill "$pid"; wait "$pid" 2>/dev/null || true
rm -f "$work/port"
"$py" - "$work/region.json" <<'PY'
import json, sys
t = lambda name: [{"key": "ddl-cluster", "value": "c1"}, {"key": "ddl-managed", "value": "true"}, {"key": "Name", "value": name}]
json.dump({
  "vpcs": [{"vpcId": "vpc-1", "cidrBlock": "10.42.0.0/16", "state": "available", "tagSet": t("c1-vpc")}],
  "subnets": [{"subnetId": "subnet-1", "vpcId": "vpc-1", "cidrBlock": "10.42.0.0/16", "tagSet": t("c1-subnet")}],
  "internet_gateways": [{"internetGatewayId": "igw-1", "attachmentSet": [{"vpcId": "vpc-1", "state": "available"}],
                         "tagSet": t("c1-igw")}],
  "route_tables": [{"routeTableId": "rtb-main", "vpcId": "vpc-1", "associationSet": [{"routeTableAssociationId": "rtbassoc-m",
                    "routeTableId": "rtb-main", "main": True}], "tagSet": []},
                   {"routeTableId": "rtb-1", "vpcId": "vpc-1", "associationSet": [{"routeTableAssociationId": "rtbassoc-1",
                    "routeTableId": "rtb-1", "subnetId": "subnet-1", "main": False}], "tagSet": t("c1-routes")}],
  "security_groups": [
    {"groupId": "sg-n", "groupName": "c1-nodes", "vpcId": "vpc-1", "tagSet": t("c1-nodes"),
     "ipPermissions": [{"ipProtocol": "-1", "groups": [{"groupId": "sg-n"}]}], "ipPermissionsEgress": []},
    {"groupId": "sg-s", "groupName": "c1-ssh", "vpcId": "vpc-1", "tagSet": t("c1-ssh"),
     "ipPermissions": [{"ipProtocol": "tcp", "fromPort": 22, "toPort": 22, "groups": [{"groupId": "sg-n"}]}],
     "ipPermissionsEgress": []}],
  "instances": [{"instanceId": "i-%d" % n, "instanceState": {"code": 16, "name": "running"}, "subnetId": "subnet-1",
                 "vpcId": "vpc-1", "ipAddress": "203.0.113.%d" % n, "launchTime": "2026-11-20T10:00:00.000Z",
                 "groupSet": [{"groupId": "sg-n"}, {"groupId": "sg-s"}],
                 "tagSet": t("c1-node%d" % n) + [{"key": "ddl-state", "value": "/ci/.ddl/c1"}]}
                | ({"instanceLifecycle": "spot"} if n == 2 else {}) for n in range(1, 8)],
  "key_pairs": [{"keyPairId": "key-1", "keyName": "c1-key", "tagSet": t("c1-key")}],
  "placement_groups": [{"groupName": "c1-nodes", "strategy": "cluster", "state": "available", "tagSet": t("c1-nodes")}]},
  open(sys.argv[1], "w"))
PY
start_standin "$fakes/aws_api.py" "$work/aws.json" --resources "$work/region.json"
A="$KEY:$SECRET"
TAGS="Filter.1.Name=tag:ddl-managed&Filter.1.Value.1=true&Filter.2.Name=tag:ddl-cluster&Filter.2.Value.1=c1"
ec2 "$A" "Action=DescribeInstances&$V&$TAGS&Filter.3.Name=instance-state-name&Filter.3.Value.1=running&MaxResults=5"
expect "DescribeInstances by tag, first page" 200 "<DescribeInstancesResponse $NS>" "<reservationSet><item><reservationId>" \
  "<instancesSet><item><instanceId>i-1</instanceId>" "<instanceState><code>16</code><name>running</name></instanceState>" \
  "<launchTime>2026-11-20T10:00:00.000Z</launchTime>" "<item><key>ddl-state</key><value>/ci/.ddl/c1</value></item>" "<nextToken>"
token=$(sed -n 's|.*<nextToken>\(.*\)</nextToken>.*|\1|p' <<<"$body")
ec2 "$A" "Action=DescribeInstances&$V&$TAGS&MaxResults=5&NextToken=$token"
expect "DescribeInstances, second page" 200 "<instanceId>i-6</instanceId>" "<instanceId>i-7</instanceId>"
grep -q "<nextToken>" <<<"$body" && { echo "FAIL: a nextToken on the last page"; failed=1; }
ec2 "$A" "Action=DescribeInstances&$V&Filter.1.Name=tag:ddl-cluster&Filter.1.Value.1=other"
expect "DescribeInstances by a tag nobody has: empty set" 200 "<reservationSet></reservationSet>"
ec2 "$A" "Action=DescribeVpcs&$V&$TAGS"
expect "DescribeVpcs by tag" 200 "<vpcSet><item><vpcId>vpc-1</vpcId>"
ec2 "$A" "Action=DeleteVpc&$V&VpcId=vpc-1"
expect "DeleteVpc with a subnet, groups and a gateway in it" 400 "<Code>DependencyViolation</Code>"
ec2 "$A" "Action=DeleteSubnet&$V&SubnetId=subnet-1"
expect "DeleteSubnet under running instances" 400 "<Code>DependencyViolation</Code>"
ec2 "$A" "Action=DetachInternetGateway&$V&InternetGatewayId=igw-1&VpcId=vpc-1"
expect "DetachInternetGateway while instances have public addresses" 400 "<Code>DependencyViolation</Code>" "mapped public address"
ec2 "$A" "Action=StopInstances&$V&InstanceId.1=i-1"
expect "StopInstances: stopping (64) from running (16)" 200 "<StopInstancesResponse $NS>" \
  "<instancesSet><item><instanceId>i-1</instanceId><currentState><code>64</code><name>stopping</name></currentState><previousState><code>16</code><name>running</name>"
ec2 "$A" "Action=StartInstances&$V&InstanceId.1=i-1"
expect "StartInstances of a stopping instance: IncorrectInstanceState" 400 "<Code>IncorrectInstanceState</Code>" \
  "The instance 'i-1' is not in a state from which it can be started."
sleep 1.2
ec2 "$A" "Action=DescribeInstances&$V&Filter.1.Name=instance-id&Filter.1.Value.1=i-1"
expect "a second later it is stopped (80), its public address released" 200 "<code>80</code><name>stopped</name>"
grep -q "<ipAddress>203.0.113.1<" <<<"$body" && { echo "FAIL: the stopped instance keeps its public address"; failed=1; }
ec2 "$A" "Action=StopInstances&$V&InstanceId.1=i-1"
expect "StopInstances of a stopped instance: no error, nothing changes" 200 "<currentState><code>80</code><name>stopped</name>"
ec2 "$A" "Action=StartInstances&$V&InstanceId.1=i-1"
expect "StartInstances: pending (0) from stopped (80)" 200 "<StartInstancesResponse $NS>" \
  "<currentState><code>0</code><name>pending</name></currentState><previousState><code>80</code><name>stopped</name>"
ec2 "$A" "Action=StopInstances&$V&InstanceId.1=i-2"
expect "StopInstances of a one-time Spot Instance: UnsupportedOperation" 400 "<Code>UnsupportedOperation</Code>" \
  "You can't stop the Spot Instance 'i-2'"
ec2 "$A" "Action=StopInstances&$V&InstanceId.1=i-99"
expect "StopInstances of an unknown instance" 400 "<Code>InvalidInstanceID.NotFound</Code>"
sleep 1.2
ids=$(for n in 1 2 3 4 5 6 7; do printf '&InstanceId.%d=i-%d' "$n" "$n"; done)
ec2 "$A" "Action=TerminateInstances&$V$ids"
expect "TerminateInstances" 200 "<instancesSet><item><instanceId>i-1</instanceId><currentState><code>32</code><name>shutting-down</name>" \
  "<previousState><code>16</code><name>running</name>"
sleep 1.2
ec2 "$A" "Action=DescribeInstances&$V&Filter.1.Name=instance-id&Filter.1.Value.1=i-1"
expect "a terminated instance is still listed, terminated" 200 "<name>terminated</name>"
ec2 "$A" "Action=DeleteSecurityGroup&$V&GroupId=sg-n"
expect "DeleteSecurityGroup of a group another group's rule names" 400 "<Code>DependencyViolation</Code>"
ec2 "$A" "Action=DescribeSecurityGroups&$V&$TAGS"
expect "DescribeSecurityGroups by tag" 200 "<securityGroupInfo><item><groupId>sg-n</groupId>" "<groups><item><groupId>sg-n</groupId></item></groups>"
ec2 "$A" "Action=RevokeSecurityGroupIngress&$V&GroupId=sg-s&IpPermissions.1.IpProtocol=tcp&IpPermissions.1.FromPort=22&IpPermissions.1.ToPort=22&IpPermissions.1.Groups.1.GroupId=sg-n"
expect "RevokeSecurityGroupIngress of the rule naming the other group" 200 "<return>true</return>"
ec2 "$A" "Action=RevokeSecurityGroupIngress&$V&GroupId=sg-s&IpPermissions.1.IpProtocol=tcp&IpPermissions.1.FromPort=22&IpPermissions.1.ToPort=22&IpPermissions.1.Groups.1.GroupId=sg-n"
expect "RevokeSecurityGroupIngress of a rule no longer there" 400 "<Code>InvalidPermission.NotFound</Code>"
for g in sg-n sg-s; do
  ec2 "$A" "Action=DeleteSecurityGroup&$V&GroupId=$g"
  expect "DeleteSecurityGroup $g (its own rule goes with it)" 200 "<return>true</return>"
done
ec2 "$A" "Action=DeleteSecurityGroup&$V&GroupId=sg-n"
expect "DeleteSecurityGroup again" 400 "<Code>InvalidGroup.NotFound</Code>"
ec2 "$A" "Action=DeleteRouteTable&$V&RouteTableId=rtb-1"
expect "DeleteRouteTable still associated with a subnet" 400 "<Code>DependencyViolation</Code>"
ec2 "$A" "Action=DeleteSubnet&$V&SubnetId=subnet-1"
expect "DeleteSubnet once the instances are terminated" 200 "<return>true</return>"
ec2 "$A" "Action=DeleteInternetGateway&$V&InternetGatewayId=igw-1"
expect "DeleteInternetGateway while attached" 400 "<Code>DependencyViolation</Code>"
ec2 "$A" "Action=DetachInternetGateway&$V&InternetGatewayId=igw-1&VpcId=vpc-1"
expect "DetachInternetGateway" 200 "<return>true</return>"
ec2 "$A" "Action=DetachInternetGateway&$V&InternetGatewayId=igw-1&VpcId=vpc-1"
expect "DetachInternetGateway again" 400 "<Code>Gateway.NotAttached</Code>"
ec2 "$A" "Action=DeleteVpc&$V&VpcId=vpc-1"
expect "DeleteVpc with its gateway detached but a route table left" 400 "<Code>DependencyViolation</Code>"
for call in "DeleteInternetGateway&InternetGatewayId=igw-1" "DeleteRouteTable&RouteTableId=rtb-1" "DeleteVpc&VpcId=vpc-1" \
            "DeleteKeyPair&KeyPairId=key-1" "DeletePlacementGroup&GroupName=c1-nodes"; do
  ec2 "$A" "Action=$call&$V"
  expect "${call%%&*}" 200 "<return>true</return>"
done
ec2 "$A" "Action=DeleteVpc&$V&VpcId=vpc-1"
expect "DeleteVpc again" 400 "<Code>InvalidVpcID.NotFound</Code>"
ec2 "$A" "Action=DeletePlacementGroup&$V&GroupName=c1-nodes"
expect "DeletePlacementGroup again" 400 "<Code>InvalidPlacementGroup.Unknown</Code>"
ec2 "$A" "Action=DeleteKeyPair&$V&KeyName=c1-key"
expect "DeleteKeyPair of a key that is gone succeeds, as EC2's does" 200 "<return>true</return>"
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); left={k: v for k, v in r.items() if k != "instances" and v}; assert not left, left' \
  "$work/region.json" || { echo "FAIL: the region is not empty"; failed=1; }

# --- the node credential: an instance profile's credentials, its role's policy, IAM ------------------------
# (tests/fakes/aws_iam.py: the IAM API Reference's refusals; the IAM User Guide's policy evaluation with
# aws:ResourceTag and aws:TagKeys; EC2's UnauthorizedOperation.)
IMDS_KEY=ASIAIMDSTEST00000001 IMDS_SECRET="imds-secret-$$" IMDS_TOKEN="imds-token-$$-$RANDOM"
"$py" - "$work/region.json" "$fakes" "$IMDS_KEY" "$IMDS_SECRET" "$IMDS_TOKEN" <<'PY'
import json, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
import aws_iam
reg = json.load(open(sys.argv[1]))
for k in ("iam_roles", "iam_instance_profiles", "instance_credentials"):
    reg.setdefault(k, [])
tags = {"ddl-cluster": "c1", "ddl-managed": "true"}
for addr in aws_iam.TF_IAM:
    aws_iam.tf_create(reg, addr, {"cluster_name": "c1", "region": "us-east-1"}, tags)
t = lambda c: [{"key": "ddl-cluster", "value": c}, {"key": "ddl-managed", "value": "true"}]
reg["instances"] += [{"instanceId": "i-m", "instanceState": {"code": 16, "name": "running"}, "tagSet": t("c1"),
                      "iamInstanceProfile": {"arn": reg["iam_instance_profiles"][0]["Arn"]}},
                     {"instanceId": "i-other", "instanceState": {"code": 16, "name": "running"}, "tagSet": t("c2")}]
reg["instance_credentials"] = [{"instanceId": "i-m", "role": "c1-master", "AccessKeyId": sys.argv[3], "_secret": sys.argv[4],
                                "_token": sys.argv[5], "LastUpdated": "2026-11-27T00:00:00Z", "Expiration": "2099-01-01T00:00:00Z"}]
json.dump(reg, open(sys.argv[1], "w"))
PY
R="$IMDS_KEY:$IMDS_SECRET"
H=(-H "X-Amz-Security-Token: $IMDS_TOKEN")
ec2 "$R" "Action=CreateTags&$V&ResourceId.1=i-m&Tag.1.Key=ddl-autostop&Tag.1.Value=why" "${H[@]}"
expect "role credentials: CreateTags ddl-autostop on the cluster's instance" 200 "<return>true</return>"
ec2 "$R" "Action=CreateTags&$V&ResourceId.1=i-m&Tag.1.Key=ddl-cluster&Tag.1.Value=c2" "${H[@]}"
expect "role credentials: CreateTags of another key (aws:TagKeys)" 403 "<Code>UnauthorizedOperation</Code>" \
  "You are not authorized to perform this operation."
for call in "StopInstances&InstanceId.1=i-other" "TerminateInstances&InstanceId.1=i-m&InstanceId.2=i-other" \
            "CreateTags&ResourceId.1=i-other&Tag.1.Key=ddl-autostop&Tag.1.Value=x" "StartInstances&InstanceId.1=i-m" \
            "DescribeInstances"; do
  ec2 "$R" "Action=$call&$V" "${H[@]}"
  expect "role credentials: ${call%%&*} outside the policy (another cluster's instance, or not allowed)" 403 \
    "<Code>UnauthorizedOperation</Code>"
done
iam() { call iam "$@"; }
IV="Version=2010-05-08"
IAM_NS='xmlns="https://iam.amazonaws.com/doc/2010-05-08/"'
iam "$R" "Action=GetRole&$IV&RoleName=c1-master" "${H[@]}"
expect "role credentials: IAM is refused" 403 "<Code>AccessDenied</Code>"
ec2 "$R" "Action=StopInstances&$V&InstanceId.1=i-m" "${H[@]}"
expect "role credentials: StopInstances of the cluster's instance" 200 "<name>stopping</name>"
iam "$A" "Action=GetRole&$IV&RoleName=c1-master"
expect "GetRole: the role with its tags" 200 "<GetRoleResponse $IAM_NS><GetRoleResult><Role>" "<RoleName>c1-master</RoleName>" \
  "<member><Key>ddl-cluster</Key><Value>c1</Value></member>" "<AssumeRolePolicyDocument>%7B%22Version%22"
iam "$A" "Action=DeleteRole&$IV&RoleName=c1-master"
expect "DeleteRole of a role in an instance profile" 409 "<Code>DeleteConflict</Code>" "must remove roles from instance profile first"
iam "$A" "Action=GetInstanceProfile&$IV&InstanceProfileName=c1-master"
expect "GetInstanceProfile: its one role" 200 "<Roles><member><Path>/</Path><RoleName>c1-master</RoleName>"
iam "$A" "Action=DeleteInstanceProfile&$IV&InstanceProfileName=c1-master"
expect "DeleteInstanceProfile holding a role" 409 "<Code>DeleteConflict</Code>"
iam "$A" "Action=RemoveRoleFromInstanceProfile&$IV&InstanceProfileName=c1-master&RoleName=c1-master"
expect "RemoveRoleFromInstanceProfile" 200 "<RemoveRoleFromInstanceProfileResponse $IAM_NS>"
iam "$A" "Action=DeleteRole&$IV&RoleName=c1-master"
expect "DeleteRole with an inline policy" 409 "<Code>DeleteConflict</Code>" "must delete policies first"
iam "$A" "Action=ListRolePolicies&$IV&RoleName=c1-master"
expect "ListRolePolicies" 200 "<PolicyNames><member>c1-autostop</member></PolicyNames>"
for call in "DeleteRolePolicy&RoleName=c1-master&PolicyName=c1-autostop" "DeleteRole&RoleName=c1-master" \
            "DeleteInstanceProfile&InstanceProfileName=c1-master"; do
  iam "$A" "Action=$call&$IV"
  expect "${call%%&*}" 200 "<ResponseMetadata><RequestId>"
done
iam "$A" "Action=GetRole&$IV&RoleName=c1-master"
expect "GetRole of a deleted role" 404 "<Code>NoSuchEntity</Code>" "The role with name c1-master cannot be found."
iam "$A" "Action=GetRole&Version=2016-11-15&RoleName=c1-master"
expect "IAM with EC2's version" 400 "<Code>InvalidParameterValue</Code>"

# --- a second opinion from AWS's SDK core, where it is installed ----------------------------------------
write_config
if "$py" -c 'import botocore' 2>/dev/null; then
  if "$py" "$fakes/check_aws_api_with_botocore.py" "$url" "$work/tls/ca.pem" "$KEY" "$SECRET" "$TMP_KEY" "$TMP_SECRET" "$TOKEN" region; then
    passed=$((passed + 1))
  else
    failed=1
  fi
else
  echo "skip botocore is not installed: the SDK cross-check did not run"
fi

# --- the request log names what was sent, never a secret -----------------------------------------------
log="$work/aws.json.requests"
if grep -qF -e "$SECRET" -e "$TMP_SECRET" -e "$TOKEN" "$log"; then
  echo "FAIL: the request log holds a secret or a session token"; failed=1
elif ! grep -q '"signed_headers": \["host", "x-amz-date", "x-amz-security-token"\]' "$log"; then
  echo "FAIL: the request log does not show the signed session token"; failed=1
else
  passed=$((passed + 1)); echo "ok   the request log holds no secret and shows what curl signed"
fi

[ "$failed" -eq 0 ] && echo "ok: $passed checks of the AWS API stand-in"
exit "$failed"
