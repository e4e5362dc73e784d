# Shared by the OpenStack e2e tests (source after lib.sh): the HTTPS stand-in of the cloud's APIs with a
# test CA, a clouds.yaml pointing at it, the Terraform stand-in on PATH, and a spec.
FAKES="$DDL_SOURCE_DIR/tests/fakes"
export PATH="$FAKES:$PATH"         # tests/fakes/terraform (and tofu) before any real one
export FAKE_TF_LOG="$WORK/terraform-calls.jsonl"
SECRET="PLANTED-Secret-$$-$RANDOM" # must never appear in anything ddl writes
APP_SECRET="PLANTED-AppCred-$$-$RANDOM$RANDOM" # the application-credential secret (use_app_credential)

# start_fake_cloud [reachable]: the API stand-in on a free port; sets CLOUD_URL and CLOUD_CFG. Both stand-ins
# share one cloud, the registry $FAKE_OPENSTACK_RESOURCES: what the Terraform stand-in creates (in the project
# of write_cloud) the APIs list and delete; the instances' nodes are kept in $WORK/nodes/<cluster>. With
# "reachable", the nodes reach it too (a master's idle clock with autostop.node_credential): it listens on
# every address, and CLOUD_URL, the catalog and the certificate name this machine's non-loopback address,
# which the master's namespace reaches through its default route.
start_fake_cloud() {
  local host=127.0.0.1 listen=127.0.0.1
  if [ "${1:-}" = reachable ]; then
    host=$(ip -4 route get 1.1.1.1 | awk '{for (i = 1; i < NF; i++) if ($i == "src") print $(i + 1)}')
    [ -n "$host" ] || fail "this machine has no non-loopback IPv4 address for the nodes to reach the stand-in at"
    listen=0.0.0.0
  fi
  if [ "$host" = 127.0.0.1 ]; then "$FAKES/make_test_ca.sh" "$WORK/tls"; else "$FAKES/make_test_ca.sh" "$WORK/tls" "$host"; fi
  CLOUD_CFG="$WORK/cloud.json"
  write_cloud 20 0
  export FAKE_OPENSTACK_RESOURCES="$WORK/cloud-resources.json" FAKE_OPENSTACK_PROJECT_ID=p-e2e
  python3 "$FAKES/openstack_api.py" --cert "$WORK/tls/server.pem" --key "$WORK/tls/server.key" \
    --config "$CLOUD_CFG" --port-file "$WORK/api.port" --resources "$FAKE_OPENSTACK_RESOURCES" \
    --listen "$listen" --public-host "$host" &
  FAKE_CLOUD_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/api.port" ] && break; sleep 0.05; done
  [ -s "$WORK/api.port" ] || fail "the OpenStack API stand-in did not start"
  CLOUD_URL="https://$host:$(cat "$WORK/api.port")"
  mkdir -p "$WORK/home/.config/openstack"
  cat >"$WORK/home/.config/openstack/clouds.yaml" <<YAML
clouds:
  fakecloud:
    region_name: RegionOne
    cacert: $WORK/tls/ca.pem
    auth:
      auth_url: $CLOUD_URL/identity/v3
      username: alice
      password: $SECRET
      project_name: ml
      user_domain_name: Default
      project_domain_name: Default
YAML
  chmod 600 "$WORK/home/.config/openstack/clouds.yaml"
  export HOME="$WORK/home"
  secret_watch
}

# use_app_credential: the clouds.yaml entry authenticates with an application credential instead.
use_app_credential() {
  cat >"$WORK/home/.config/openstack/clouds.yaml" <<YAML
clouds:
  fakecloud:
    region_name: RegionOne
    cacert: $WORK/tls/ca.pem
    auth_type: v3applicationcredential
    auth:
      auth_url: $CLOUD_URL/identity/v3
      application_credential_id: ddl-e2e-cred
      application_credential_secret: $APP_SECRET
YAML
  chmod 600 "$WORK/home/.config/openstack/clouds.yaml"
}

# write_cloud MAX_INSTANCES USED_INSTANCES: the cloud's state as the API stand-in serves it (its project id is
# FAKE_OPENSTACK_PROJECT_ID's, set in start_fake_cloud).
write_cloud() {
  cat >"$CLOUD_CFG" <<JSON
{"users": {"alice": "$SECRET"}, "app_credentials": {"ddl-e2e-cred": "$APP_SECRET"}, "project": {"id": "p-e2e", "name": "ml"},
 "flavors": [{"name": "m1.small", "vcpus": 1, "ram": 2048, "disk": 0}, {"name": "g1.small", "vcpus": 2, "ram": 4096, "disk": 0}],
 "images": ["Ubuntu 22.04"], "networks": [{"name": "public", "router:external": true}],
 "compute_limits": {"maxTotalInstances": $1, "totalInstancesUsed": $2, "maxTotalCores": -1, "totalCoresUsed": 0,
                    "maxTotalRAMSize": -1, "totalRAMUsed": 0},
 "floatingip": {"limit": 5, "used": 0, "reserved": 0},
 "volume_limits": {"maxTotalVolumeGigabytes": 1000, "totalGigabytesUsed": 0, "maxTotalVolumes": 10, "totalVolumesUsed": 0}}
JSON
  chmod 600 "$CLOUD_CFG"
}

# openstack_spec NAME WORKERS: an OpenStack spec for the fake cloud; root logins as on the local nodes.
openstack_spec() {
  cat >"$1.yaml" <<YAML
apiVersion: ddl/v1
name: $1
target: openstack
nodes:
  master: {flavor: m1.small}
  workers: {count: $2, flavor: g1.small}
access:
  user: root
  allowed_cidrs: [10.0.0.0/8]
openstack:
  cloud: fakecloud
  external_network: public
  boot_volume_gb: 20
YAML
  CLUSTERS+=("$1")
}

# assert_no_secret: nothing ddl wrote or ran since the cloud started or the last call (state, rendered
# files, logs, Terraform's argv and log, any argv or subprocess environment) holds the password; only the
# user's clouds.yaml and the stand-in's own user table do (both 0600). Then watches again.
assert_no_secret() {
  secret_sweep "OpenStack password" "$SECRET" '/(clouds\.yaml|cloud\.json)$' "$WORK"
  secret_watch
}
