output "cluster_name" {
  description = "Name of the cluster (prefix of every resource)."
  value       = var.cluster_name
}

output "master_public_ip" {
  description = "Public IPv4 address of the master: ddl's SSH entry point and the ProxyJump host for the workers."
  value       = aws_instance.master.public_ip
}

output "master_private_ip" {
  description = "Address of the master in the cluster's subnet."
  value       = aws_instance.master.private_ip
}

output "worker_private_ips" {
  description = "Addresses of the workers in the cluster's subnet, in worker index order."
  value       = aws_instance.worker[*].private_ip
}

output "ssh_user" {
  description = "Login user of the nodes."
  value       = var.ssh_user
}
