# What every ddl Terraform module shares: the inputs ddl renders for any cloud, the refusal of SSH from
# anywhere, and the outputs ddl reads. Each module (src/targets/<name>/terraform/) holds this file as a
# link and defines the three locals the outputs read: master_public_ip, master_private_ip and
# worker_private_ips. A cloud's own limits on these inputs are preconditions of the resources they reach.

variable "cluster_name" {
  description = "Cluster name; prefix of every resource name and the value of ddl's cluster tag. DNS-safe: 1-40 lowercase letters, digits and '-', starting with a letter."
  type        = string

  validation {
    condition     = length(var.cluster_name) <= 40 && can(regex("^[a-z]([-a-z0-9]*[a-z0-9])?$", var.cluster_name))
    error_message = "cluster_name must be 1-40 lowercase letters, digits and '-', start with a letter and not end with '-'."
  }
}

variable "state_dir" {
  description = "The ddl state folder that deployed this cluster, recorded on its servers so that `ddl gc --spec` can tell a leaked cluster from one still owned."
  type        = string
  default     = ""
}

variable "ssh_user" {
  description = "Login user of the image (e.g. ubuntu); reported in the outputs for ddl's SSH."
  type        = string

  validation {
    condition     = can(regex("^[a-z_][a-z0-9_-]*$", var.ssh_user))
    error_message = "ssh_user must be a valid Unix user name."
  }
}

variable "public_key" {
  description = "OpenSSH public key installed for ssh_user on every node."
  type        = string

  validation {
    condition     = can(regex("^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-[a-z0-9@.-]+) [A-Za-z0-9+/=]+", trimspace(var.public_key)))
    error_message = "public_key must be an OpenSSH public key (\"ssh-ed25519 AAAA...\")."
  }
}

variable "worker_count" {
  description = "Number of workers (0-256)."
  type        = number

  validation {
    condition     = var.worker_count >= 0 && var.worker_count <= 256 && floor(var.worker_count) == var.worker_count
    error_message = "worker_count must be a whole number from 0 to 256."
  }
}

variable "network_cidr" {
  description = "IPv4 network of the cluster's subnet when the module creates one (a cloud may limit its prefix)."
  type        = string

  validation {
    condition     = can(cidrhost(var.network_cidr, 0)) && !strcontains(var.network_cidr, ":") && try(cidrsubnet(var.network_cidr, 0, 0) == var.network_cidr, false)
    error_message = "network_cidr must be an IPv4 network address with its prefix, such as 192.168.42.0/24 (no host bits set)."
  }
}

variable "allowed_cidrs" {
  description = "Networks allowed to reach the master over SSH (22/tcp). Nothing else is open from outside."
  type        = list(string)

  validation {
    condition     = length(var.allowed_cidrs) > 0
    error_message = "allowed_cidrs must list at least one network."
  }

  validation {
    condition     = alltrue([for c in var.allowed_cidrs : can(cidrhost(c, 0)) && try(cidrsubnet(c, 0, 0) == c, false)])
    error_message = "Every entry of allowed_cidrs must be a network address with its prefix, such as 203.0.113.0/24 or 2001:db8::/32 (no host bits set)."
  }
}

# Terraform < 1.9 cannot refer to another variable in a validation block, so the rule "no 0.0.0.0/0 or
# ::/0 unless allow_any_source" is a precondition of the security group that holds the SSH rules
# (local.ssh_from_anywhere below); it fails the plan before anything is created.
variable "allow_any_source" {
  description = "Allow a /0 entry (0.0.0.0/0, ::/0) in allowed_cidrs, i.e. SSH from anywhere."
  type        = bool
  default     = false
}

variable "expires" {
  description = "When the cluster's lifetime ends, RFC 3339 in UTC (2026-11-28T00:00:00Z), recorded on the cluster's resources (tags or metadata) for `ddl gc --expired --spec`; empty: no lifetime, not recorded."
  type        = string
  default     = ""

  validation {
    condition     = var.expires == "" || (can(regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", var.expires)) && can(formatdate("YYYY", var.expires)))
    error_message = "expires must be empty or a UTC time in RFC 3339 with whole seconds, such as 2026-11-28T00:00:00Z."
  }
}

variable "stopped" {
  description = "Whether the nodes are stopped (`ddl stop`; `ddl start` sets it back to false): their disks are kept. ddl writes it to power.auto.tfvars.json beside terraform.tfvars.json, so that every later plan keeps them as they are."
  type        = bool
  default     = false
}

variable "node_credential" {
  description = "Whether the master holds a credential scoped to this cluster's own servers (spec autostop.node_credential), with which its idle clock ends the cluster itself: an IAM instance profile on AWS, an application credential on OpenStack. Each module gates its resources on it."
  type        = bool
  default     = false
}

variable "user_data" {
  description = "cloud-init user data for every node (empty: none). Kept in clear text in the Terraform state: no secrets."
  type        = string
  default     = ""
}

locals {
  # The entries of allowed_cidrs that open SSH to the whole Internet (refused unless allow_any_source).
  ssh_from_anywhere         = [for c in var.allowed_cidrs : c if endswith(c, "/0")]
  ssh_from_anywhere_refusal = "allowed_cidrs contains ${join(", ", local.ssh_from_anywhere)}, which opens SSH to the whole Internet; list your own networks or set allow_any_source = true."
  user_data                 = var.user_data != "" ? var.user_data : null
}

output "cluster_name" {
  description = "Name of the cluster (prefix of every resource)."
  value       = var.cluster_name
}

output "master_public_ip" {
  description = "Public address of the master: ddl's SSH entry point and the ProxyJump host for the workers."
  value       = local.master_public_ip
}

output "master_private_ip" {
  description = "Address of the master in the cluster's network."
  value       = local.master_private_ip
}

output "worker_private_ips" {
  description = "Addresses of the workers in the cluster's network, in worker index order."
  value       = local.worker_private_ips
}

output "ssh_user" {
  description = "Login user of the nodes."
  value       = var.ssh_user
}
