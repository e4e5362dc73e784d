# Nodes: one master (with the only floating IP) and var.worker_count workers, all booting from a
# volume created from var.image_name, each attached to the cluster network through its own port.

data "openstack_images_image_v2" "node" {
  name        = var.image_name
  most_recent = true
}

resource "openstack_compute_keypair_v2" "cluster" {
  name       = "${var.cluster_name}-key"
  public_key = var.public_key
}

resource "openstack_compute_servergroup_v2" "cluster" {
  count = var.anti_affinity ? 1 : 0

  name     = "${var.cluster_name}-nodes"
  policies = ["anti-affinity"]
}

locals {
  # What ddl gc looks for: servers carry metadata (ddl_cluster, ddl_role, ddl_state, ddl_expires), Neutron
  # resources these tags (Neutron "Tag extension": filter with ?tags=a,b).
  ddl_tags = concat(["ddl", "ddl-cluster=${var.cluster_name}"], local.expiry_tags)
  # When the cluster's lifetime ends (var.expires, common.tf), so that `ddl gc --expired --spec` finds an
  # expired cluster on the cloud even where the state folder that deployed it is gone; no lifetime: neither.
  # Merged into the servers' metadata; added to ddl_tags (Neutron tags are plain strings).
  expiry_metadata = { for k, v in { ddl_expires = var.expires } : k => v if v != "" }
  expiry_tags     = [for t in ["ddl-expires=${var.expires}"] : t if var.expires != ""]
  # Empty unless var.anti_affinity: drives the dynamic scheduler_hints blocks below.
  server_group_ids = openstack_compute_servergroup_v2.cluster[*].id

  # What the outputs of common.tf report.
  master_public_ip   = openstack_networking_floatingip_associate_v2.master.floating_ip
  master_private_ip  = openstack_compute_instance_v2.master.network[0].fixed_ip_v4
  worker_private_ips = [for w in openstack_compute_instance_v2.worker : w.network[0].fixed_ip_v4]
}

# --- ports -----------------------------------------------------------------------------------

resource "openstack_networking_port_v2" "master" {
  name               = "${var.cluster_name}-master"
  network_id         = local.network_id
  admin_state_up     = true
  security_group_ids = [openstack_networking_secgroup_v2.cluster.id]
  tags               = local.ddl_tags

  dynamic "fixed_ip" {
    for_each = local.subnet_ids
    content {
      subnet_id = fixed_ip.value
    }
  }
}

resource "openstack_networking_port_v2" "worker" {
  count = var.worker_count

  name               = "${var.cluster_name}-worker-${count.index}"
  network_id         = local.network_id
  admin_state_up     = true
  security_group_ids = [openstack_networking_secgroup_v2.cluster.id]
  tags               = local.ddl_tags

  dynamic "fixed_ip" {
    for_each = local.subnet_ids
    content {
      subnet_id = fixed_ip.value
    }
  }
}

# --- instances -------------------------------------------------------------------------------

# The nodes' power_state follows var.stopped (common.tf: `ddl stop`, `ddl start`). The provider's power_state
# (openstack_compute_instance_v2, "Argument Reference") takes "active", "shutoff", "shelved_offloaded" and
# "paused"; a change is an update in place: Nova's os-stop / os-start (Compute API, "Stop Server (os-stop
# Action)", "Start Server (os-start Action)").
#
# Stop, not shelve: a SHUTOFF server stays on its host with its flavor's vCPUs, RAM and GPUs held, so `ddl
# start` brings every node back within seconds and cannot fail for want of a free GPU host. A shelved
# (offloaded) server frees its host, but unshelving waits for the scheduler to find one again, which on a busy
# shared GPU cloud may leave the cluster short of nodes. Either way the boot volumes stay (and keep their
# Cinder quota and cost); a stopped server still counts against the project's instance, core and RAM quota,
# and clouds that bill by flavor may still bill it.
resource "openstack_compute_instance_v2" "master" {
  name        = "${var.cluster_name}-master"
  flavor_name = var.master_flavor
  key_pair    = openstack_compute_keypair_v2.cluster.name
  user_data   = local.user_data

  block_device {
    uuid                  = data.openstack_images_image_v2.node.id
    source_type           = "image"
    destination_type      = "volume"
    volume_size           = var.boot_volume_gb
    boot_index            = 0
    delete_on_termination = true
  }

  network {
    port = openstack_networking_port_v2.master.id
  }

  dynamic "scheduler_hints" {
    for_each = local.server_group_ids
    content {
      group = scheduler_hints.value
    }
  }

  metadata = merge({
    ddl_cluster = var.cluster_name
    ddl_role    = "master"
    ddl_state   = var.state_dir
  }, local.expiry_metadata)

  power_state = var.stopped ? "shutoff" : "active"
}

resource "openstack_compute_instance_v2" "worker" {
  count = var.worker_count

  name        = "${var.cluster_name}-worker-${count.index}"
  flavor_name = var.worker_flavor
  key_pair    = openstack_compute_keypair_v2.cluster.name
  user_data   = local.user_data

  block_device {
    uuid                  = data.openstack_images_image_v2.node.id
    source_type           = "image"
    destination_type      = "volume"
    volume_size           = var.boot_volume_gb
    boot_index            = 0
    delete_on_termination = true
  }

  network {
    port = openstack_networking_port_v2.worker[count.index].id
  }

  dynamic "scheduler_hints" {
    for_each = local.server_group_ids
    content {
      group = scheduler_hints.value
    }
  }

  metadata = merge({
    ddl_cluster = var.cluster_name
    ddl_role    = "worker"
    ddl_state   = var.state_dir
  }, local.expiry_metadata)

  power_state = var.stopped ? "shutoff" : "active"
}

# --- floating IP (master only; workers are reached through the master) ----------------------

resource "openstack_networking_floatingip_v2" "master" {
  pool        = var.external_network
  description = "${var.cluster_name} master"
  tags        = local.ddl_tags
}

resource "openstack_networking_floatingip_associate_v2" "master" {
  floating_ip = openstack_networking_floatingip_v2.master.address
  port_id     = openstack_networking_port_v2.master.id

  # A floating IP can only reach a port whose subnet has a router to the external network.
  depends_on = [openstack_networking_router_interface_v2.cluster]
}
