#!/usr/bin/env bash
# Follows: "Query requests for Amazon EC2" (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/Query-Requests.html),
# "Error codes for the Amazon EC2 API" (…/APIReference/errors-overview.html), Service Quotas "GetServiceQuota"
# (https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_GetServiceQuota.html) and "Create a
# signed AWS API request" (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).
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
command -v curl >/dev/null || { echo "FAIL: curl not found"; exit 1; }
command -v openssl >/dev/null || { echo "FAIL: openssl not found"; exit 1; }
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
E.fromstring(t.encode()) if t.startswith("<?xml") else json.loads(t)' <<<"$body"; then
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

# --- a second opinion from AWS's SDK core, where it is installed ----------------------------------------
write_config
if "$py" -c 'import botocore' 2>/dev/null; then
  if "$py" "$fakes/check_aws_api_with_botocore.py" "$url" "$work/tls/ca.pem" "$KEY" "$SECRET" "$TMP_KEY" "$TMP_SECRET" "$TOKEN"; then
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
