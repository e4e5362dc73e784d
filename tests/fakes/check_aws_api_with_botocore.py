#!/usr/bin/env python3
"""Follows: botocore's service models ec2/2016-11-15 and service-quotas/2019-06-24 (the shapes every AWS SDK
is generated from, https://github.com/boto/botocore/tree/develop/botocore/data), and the Amazon EC2 API
Reference actions it calls: DescribeInstances, DescribeSecurityGroups, DeleteVpc
(https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstances.html and ..._DeleteVpc.html),
with "Error codes for the Amazon EC2 API" (.../APIReference/errors-overview.html: InvalidVpcID.NotFound).

Second opinion on tests/fakes/aws_api.py from AWS's own SDK core: botocore signs the requests and parses
the replies with its EC2 and Service Quotas models, so a shape or a signature the SDKs would not accept fails
here. Run by test_aws_api.sh when botocore is installed (it is not a dependency of ddl).

  check_aws_api_with_botocore.py URL CA_FILE KEY SECRET TMP_KEY TMP_SECRET TOKEN [region]
With "region", the stand-in serves test_aws_api.sh's simulated region after its cluster c1 was removed: its
terminated instances and the NotFound answers of what is gone are parsed too.
Prints one line per check; exit 1 when one fails.
"""
import sys

import botocore.session
from botocore.exceptions import ClientError

url, ca, key, secret, tmp_key, tmp_secret, token = sys.argv[1:8]
session = botocore.session.get_session()
failed = 0


def client(service, access_key=key, secret_key=secret, session_token=None):
    return session.create_client(service, region_name="us-east-1", endpoint_url=url, verify=ca,
                                 aws_access_key_id=access_key, aws_secret_access_key=secret_key,
                                 aws_session_token=session_token)


def check(what, call, want):
    """want(result) -> bool for a success, or (status, code) for an expected error."""
    global failed
    try:
        result = call()
        ok = not isinstance(want, tuple) and want(result)
        got = "success"
    except ClientError as e:
        status, code = e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]
        ok = want == (status, code)
        got = "%d %s" % (status, code)
    print("%s botocore: %s (%s)" % ("ok  " if ok else "FAIL:", what, got))
    failed += not ok


ec2, sq = client("ec2"), client("service-quotas")
check("DescribeInstanceTypes parsed: vCPUs and GPUs",
      lambda: ec2.describe_instance_types(InstanceTypes=["g5.xlarge"])["InstanceTypes"][0],
      lambda t: t["VCpuInfo"]["DefaultVCpus"] == 4 and t["GpuInfo"]["Gpus"][0]["Count"] == 1)
check("DescribeInstanceTypeOfferings parsed",
      lambda: ec2.describe_instance_type_offerings(
          LocationType="region", Filters=[{"Name": "instance-type", "Values": ["g5.xlarge", "x9.none"]}]),
      lambda r: [o["InstanceType"] for o in r["InstanceTypeOfferings"]] == ["g5.xlarge"])
check("DescribeImages parsed: root snapshot size",
      lambda: ec2.describe_images(ImageIds=["ami-0123456789abcdef0"])["Images"][0],
      lambda i: i["BlockDeviceMappings"][0]["Ebs"]["VolumeSize"] == 75 and i["ImageOwnerAlias"] == "amazon")
check("DescribeImages with temporary credentials",
      lambda: client("ec2", tmp_key, tmp_secret, token).describe_images(Owners=["amazon"])["Images"],
      lambda images: len(images) == 1)
check("DescribeImages of an absent AMI", lambda: ec2.describe_images(ImageIds=["ami-00000000"]),
      (400, "InvalidAMIID.NotFound"))
check("DescribeImages with a bad signature", lambda: client("ec2", secret_key="wrong").describe_images(),
      (403, "SignatureDoesNotMatch"))
check("GetServiceQuota parsed", lambda: sq.get_service_quota(ServiceCode="ec2", QuotaCode="L-DB2E81BA")["Quota"],
      lambda q: q["Value"] == 8.0 and q["UsageMetric"]["MetricDimensions"]["Resource"] == "vCPU")
check("GetServiceQuota with temporary credentials",
      lambda: client("service-quotas", tmp_key, tmp_secret, token).get_service_quota(
          ServiceCode="ec2", QuotaCode="L-1216C47A")["Quota"], lambda q: q["Value"] == 32.0)
check("GetServiceQuota of an unknown quota", lambda: sq.get_service_quota(ServiceCode="ec2", QuotaCode="L-00000000"),
      (400, "NoSuchResourceException"))
check("GetServiceQuota with an unknown key",
      lambda: client("service-quotas", "AKIDUNKNOWN000000000").get_service_quota(ServiceCode="ec2", QuotaCode="L-DB2E81BA"),
      (403, "UnrecognizedClientException"))
if sys.argv[8:9] == ["region"]:
    check("DescribeInstances parsed: terminated instances, launch time, tags",
          lambda: [i for r in ec2.describe_instances(Filters=[{"Name": "tag:ddl-cluster", "Values": ["c1"]}],
                                                     MaxResults=5)["Reservations"] for i in r["Instances"]],
          lambda insts: len(insts) == 5 and all(i["State"]["Name"] == "terminated" and i["LaunchTime"].year == 2026 and
                                                {"Key": "ddl-state", "Value": "/ci/.ddl/c1"} in i["Tags"] for i in insts))
    check("DescribeSecurityGroups by tag after the groups are gone",
          lambda: ec2.describe_security_groups(Filters=[{"Name": "tag:ddl-cluster", "Values": ["c1"]}])["SecurityGroups"],
          lambda groups: groups == [])
    check("DeleteVpc of a VPC that is gone", lambda: ec2.delete_vpc(VpcId="vpc-1"), (400, "InvalidVpcID.NotFound"))
sys.exit(1 if failed else 0)
