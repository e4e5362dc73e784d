# Shared by the AWS e2e tests (source after lib.sh): the HTTPS stand-in of EC2 + Service Quotas
# (tests/fakes/aws_api.py) with a test CA, a shared credentials file holding the planted secret, the
# endpoint variables pointing at the stand-in, the Terraform stand-in on PATH, and a spec.
FAKES="$DDL_SOURCE_DIR/tests/fakes"
export PATH="$FAKES:$PATH" # tests/fakes/terraform (and tofu) before any real one
export FAKE_TF_LOG="$WORK/terraform-calls.jsonl" FAKE_TF_LOG_AWS="$WORK/terraform-aws-env.jsonl"
AWS_KEY=AKIDDDLE2E0000000001
SECRET="PLANTED-AwsSecret-$$-$RANDOM" # must never appear in anything ddl writes or any argv
TMP_KEY=ASIADDLE2E0000000002 # temporary credentials (profile "temp"): key, secret and session token
TMP_SECRET="PLANTED-AwsTmpSecret-$$-$RANDOM"
TOKEN="PLANTED-AwsToken-$$-$RANDOM$RANDOM"

# start_fake_aws: the API stand-in on a free port, ~/.aws/credentials with the key, endpoints exported. The
# stand-in and the Terraform stand-in share one simulated region, $FAKE_AWS_RESOURCES: what Terraform
# creates is listed, terminated and deleted through the EC2 API as in a real region. It listens on this
# machine's own address (HOST_IP, in its certificate), which a master's node reaches too (the node
# credential: the master calls EC2 itself).
start_fake_aws() {
  HOST_IP=$(ip -4 route get 1.1.1.1 | awk '{for (i = 1; i < NF; i++) if ($i == "src") print $(i + 1)}')
  [ -n "$HOST_IP" ] || fail "this machine has no address with a default route"
  "$FAKES/make_test_ca.sh" "$WORK/tls" "$HOST_IP"
  AWS_CFG="$WORK/aws.json"
  export FAKE_AWS_RESOURCES="$WORK/region.json"
  write_aws 64
  python3 "$FAKES/aws_api.py" --cert "$WORK/tls/server.pem" --key "$WORK/tls/server.key" \
    --config "$AWS_CFG" --port-file "$WORK/aws.port" --resources "$FAKE_AWS_RESOURCES" --listen 0.0.0.0 &
  FAKE_AWS_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/aws.port" ] && break; sleep 0.05; done
  [ -s "$WORK/aws.port" ] || fail "the AWS API stand-in did not start"
  mkdir -p "$WORK/home/.aws"
  printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n[temp]\naws_access_key_id = %s\naws_secret_access_key = %s\naws_session_token = %s\n' \
    "$AWS_KEY" "$SECRET" "$TMP_KEY" "$TMP_SECRET" "$TOKEN" >"$WORK/home/.aws/credentials"
  chmod 600 "$WORK/home/.aws/credentials"
  export HOME="$WORK/home"
  unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE \
    AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE
  export AWS_ENDPOINT_URL_EC2="https://$HOST_IP:$(cat "$WORK/aws.port")"
  export AWS_ENDPOINT_URL_SERVICE_QUOTAS="$AWS_ENDPOINT_URL_EC2" AWS_ENDPOINT_URL_IAM="$AWS_ENDPOINT_URL_EC2"
  export AWS_CA_BUNDLE="$WORK/tls/ca.pem"
  secret_watch
}

# write_aws G_VCPU_QUOTA: the account and region as the stand-in serves them (us-east-1; g5.xlarge and
# m5.large offered, p5.48xlarge not; one AMI; On-Demand quotas for G/VT and Standard).
write_aws() {
  cat >"$AWS_CFG" <<JSON
{"region": "us-east-1", "account_id": "123456789012",
 "credentials": {"$AWS_KEY": {"secret": "$SECRET"}, "$TMP_KEY": {"secret": "$TMP_SECRET", "session_token": "$TOKEN"}},
 "instance_types": {
   "g5.xlarge": {"vcpus": 4, "gpus": {"count": 1, "name": "A10G", "manufacturer": "NVIDIA", "memory_mib": 24576},
                 "zones": ["us-east-1a"]},
   "m5.large": {"vcpus": 2, "zones": ["us-east-1a"]},
   "p5.48xlarge": {"vcpus": 192, "offered": false}},
 "images": {"ami-0123456789abcdef0": {"name": "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) 20250101",
                                      "owner_id": "898082745236", "owner_alias": "amazon", "root_gb": 75}},
 "quotas": {"ec2": {"L-DB2E81BA": {"value": $1, "name": "Running On-Demand G and VT instances"},
                    "L-1216C47A": {"value": 32, "name": "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"}}}}
JSON
  chmod 600 "$AWS_CFG"
}

# aws_spec NAME WORKERS [WORKER_TYPE] [extra aws: lines...]: an AWS spec for the stand-in; root logins as
# on the local nodes.
aws_spec() {
  local name=$1 workers=$2 type=${3:-g5.xlarge}
  shift 3 || shift $#
  { cat <<YAML
apiVersion: ddl/v1
name: $name
target: aws
nodes:
  master: {flavor: m5.large}
  workers: {count: $workers, flavor: $type}
access:
  user: root
  allowed_cidrs: [10.0.0.0/8]
aws:
  region: us-east-1
  ami: ami-0123456789abcdef0
  root_volume_gb: 100
YAML
    for l in "$@"; do printf '  %s\n' "$l"; done; } >"$name.yaml"
  CLUSTERS+=("$name")
}

# assert_no_secret: nothing ddl wrote or ran (state, rendered files, logs, Terraform's argv and log, any
# argv or subprocess environment) holds the secret key; only the user's credentials file and the
# stand-in's own table do (both 0600). Then watches again.
assert_no_secret() {
  secret_sweep "AWS secret access key" "$SECRET" '/(\.aws/credentials|aws\.json)$' "$WORK"
  # The watcher stopped with the first sweep; what it recorded is searched for the token too.
  if grep -qF -- "$TOKEN" "$WORK/.secret-watch/argv" "$WORK/.secret-watch/environ" 2>/dev/null; then
    fail "the session token was in a process's argv or a child's environment"
  fi
  secret_sweep "AWS session token" "$TOKEN" '/(\.aws/credentials|aws\.json)$' "$WORK"
  secret_watch
}
