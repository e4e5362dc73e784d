# Nested rules hold in dynamic blocks too; max_items limits blocks written in the source.
# expect: resource openstack_networking_port_v2.p: "binding" allows at most 1 block(s), found 2
# expect: resource openstack_networking_port_v2.p: unknown argument "fixed_ip.subnet"
# expect: resource openstack_networking_port_v2.p: dynamic "allowed_address_pairs": unknown key "contents"
# expect: resource openstack_networking_port_v2.p: dynamic "allowed_address_pairs": needs exactly one content block
# expect: resource openstack_networking_port_v2.p: "fixed_ip" conflicts with "no_fixed_ip"
resource "openstack_networking_port_v2" "p" {
  network_id  = "00000000-0000-0000-0000-000000000000"
  no_fixed_ip = true

  binding {
    vnic_type = "direct"
  }
  binding {
    vnic_type = "normal"
  }

  dynamic "fixed_ip" {
    for_each = ["00000000-0000-0000-0000-000000000000"]
    content {
      subnet = fixed_ip.value
    }
  }

  dynamic "allowed_address_pairs" {
    for_each = ["10.0.0.1"]
    contents {
      ip_address = allowed_address_pairs.value
    }
  }
}
