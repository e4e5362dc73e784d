output "cluster_name" {
  description = "Name of the cluster (prefix of every resource)."
  value       = var.cluster_name
}

output "master_public_ip" {
  description = "Floating IP of the master: ddl's SSH entry point and the ProxyJump host for the workers."
  value       = openstack_networking_floatingip_associate_v2.master.floating_ip
}

output "master_private_ip" {
  description = "Address of the master on the cluster network."
  value       = openstack_compute_instance_v2.master.network[0].fixed_ip_v4
}

output "worker_private_ips" {
  description = "Addresses of the workers on the cluster network, in worker index order."
  value       = [for w in openstack_compute_instance_v2.worker : w.network[0].fixed_ip_v4]
}

output "ssh_user" {
  description = "Login user of the nodes."
  value       = var.ssh_user
}
