# The cluster network: either an existing one (var.network_name) or a new network + subnet + router
# to the external network. Exactly one of the two paths has count = 1.

locals {
  create_network = var.network_name == ""
  network_id     = local.create_network ? openstack_networking_network_v2.cluster[0].id : data.openstack_networking_network_v2.existing[0].id
  # Subnet the ports take their address from; empty list on an existing network (Neutron picks).
  subnet_ids = openstack_networking_subnet_v2.cluster[*].id
}

data "openstack_networking_network_v2" "external" {
  name     = var.external_network
  external = true
}

data "openstack_networking_network_v2" "existing" {
  count = local.create_network ? 0 : 1

  name = var.network_name
}

resource "openstack_networking_network_v2" "cluster" {
  count = local.create_network ? 1 : 0

  name           = "${var.cluster_name}-net"
  admin_state_up = true
  tags           = local.ddl_tags
}

resource "openstack_networking_subnet_v2" "cluster" {
  count = local.create_network ? 1 : 0

  name            = "${var.cluster_name}-subnet"
  tags            = local.ddl_tags
  network_id      = openstack_networking_network_v2.cluster[0].id
  cidr            = var.network_cidr
  ip_version      = 4
  enable_dhcp     = true
  dns_nameservers = var.dns_nameservers
}

resource "openstack_networking_router_v2" "cluster" {
  count = local.create_network ? 1 : 0

  name                = "${var.cluster_name}-router"
  admin_state_up      = true
  tags                = local.ddl_tags
  external_network_id = data.openstack_networking_network_v2.external.id
}

resource "openstack_networking_router_interface_v2" "cluster" {
  count = local.create_network ? 1 : 0

  router_id = openstack_networking_router_v2.cluster[0].id
  subnet_id = openstack_networking_subnet_v2.cluster[0].id
}
