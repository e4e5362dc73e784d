# An argument the provider does not have (a typo of flavor_name).
# expect: resource openstack_compute_instance_v2.node: unknown argument "flavour_name"
resource "openstack_compute_instance_v2" "node" {
  name         = "node"
  flavour_name = "m1.large"
}
