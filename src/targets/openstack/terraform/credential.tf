# The node credential (autostop.node_credential; var.node_credential of common.tf): a Keystone application
# credential the master's idle clock (ddl-idle, ddl_idle_openstack.py) uses to end the cluster itself once it
# has been idle for autostop.idle_minutes: it records why on the master's metadata (ddl_autostop), then stops
# or deletes every server of the cluster. Off by default: no cloud credential reaches a node unless the
# user opts in.
#
# What it may do (Keystone "Application Credentials", access rules; enforced by keystonemiddleware in
# front of Nova): POST .../servers/<id>/action (any server action: os-stop, but also reboot, rebuild,
# resize... since a rule names a path and a method, not a body) and DELETE .../servers/<id> on each of this
# cluster's servers, and PUT .../servers/<master>/metadata/ddl_autostop; nothing else on any service.
# keystonemiddleware matches a rule's path against the whole request path, which holds the prefix the
# compute endpoint is mounted under (".../compute/v2.1" on clouds that serve Nova below a path, "/v2.1" on
# those that serve it at its own port): "/**/servers/<id>" matches both ("**" is any string, "/" included)
# and still names only this server, of the compute service. restricted (unrestricted = false): it cannot
# create or delete application credentials or trusts. It holds the role member only and expires with the
# cluster's lifetime (var.expires) where one is set. ddl revokes it at destroy (Terraform deletes it).
#
# Every argument forces a new credential (the provider's schema): the access rules name the servers' ids,
# so a resize or a replaced server replaces the credential and ddl hands the new one to the master.

locals {
  # The order ddl-idle acts in: the workers first, the master (which runs the clock) last.
  server_ids = concat(openstack_compute_instance_v2.worker[*].id, [openstack_compute_instance_v2.master.id])
  node_credential_rules = concat(
    flatten([for id in local.server_ids : [
      { method = "POST", path = "/**/servers/${id}/action" },
      { method = "DELETE", path = "/**/servers/${id}" },
    ]]),
    [{ method = "PUT", path = "/**/servers/${openstack_compute_instance_v2.master.id}/metadata/ddl_autostop" }],
  )
}

resource "openstack_identity_application_credential_v3" "node" {
  count = var.node_credential ? 1 : 0

  name         = "${var.cluster_name}-node"
  description  = "ddl cluster ${var.cluster_name}: the master's idle clock stops or deletes the cluster's own servers"
  unrestricted = false
  roles        = ["member"]
  expires_at   = var.expires != "" ? var.expires : null

  dynamic "access_rules" {
    for_each = local.node_credential_rules
    content {
      service = "compute"
      method  = access_rules.value.method
      path    = access_rules.value.path
    }
  }
}

output "node_credential" {
  description = "The node credential (id, secret) ddl hands to the master; null without var.node_credential. Never stored in ddl's state."
  value = var.node_credential ? {
    id     = openstack_identity_application_credential_v3.node[0].id
    secret = openstack_identity_application_credential_v3.node[0].secret
  } : null
  sensitive = true
}

output "server_ids" {
  description = "The ids of the cluster's servers, the workers first and the master last (the order the idle clock acts in)."
  value       = local.server_ids
}
