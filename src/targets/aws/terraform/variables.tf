# The AWS module's own inputs; those of every cloud are in common.tf. ddl writes terraform.tfvars.json
# with exactly the keys of both files.

variable "region" {
  description = "AWS region to create the cluster in, such as us-east-1."
  type        = string

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+$", var.region))
    error_message = "region must be an AWS region name such as us-east-1 or eu-central-1."
  }
}

variable "profile" {
  description = "Profile of the shared credentials/config files to use (empty: the environment's credentials, else the default profile)."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^[A-Za-z0-9_.@+-]*$", var.profile))
    error_message = "profile must be a profile name (letters, digits and _ . @ + -), or empty."
  }
}

variable "ami_id" {
  description = "AMI to boot every node from. Empty: the newest image named like ami_name_filter owned by one of ami_owners."
  type        = string
  default     = ""

  validation {
    condition     = var.ami_id == "" || can(regex("^ami-([0-9a-f]{8}|[0-9a-f]{17})$", var.ami_id))
    error_message = "ami_id must be an AMI id such as ami-0123456789abcdef0, or empty."
  }
}

variable "ami_owners" {
  description = "Owners (account ids, or the aliases amazon / aws-marketplace / self) the AMI lookup accepts; used when ami_id is empty."
  type        = list(string)
  default     = ["amazon"]

  validation {
    condition     = length(var.ami_owners) > 0 && alltrue([for o in var.ami_owners : can(regex("^([0-9]{12}|amazon|aws-marketplace|self)$", o))])
    error_message = "ami_owners must list at least one 12-digit account id or one of amazon, aws-marketplace, self."
  }
}

variable "ami_name_filter" {
  description = "Image name pattern (* and ? wildcards) of the AMI lookup; used when ami_id is empty. The default is the AWS Deep Learning Base AMI with the open-source NVIDIA driver, Ubuntu 22.04, x86_64."
  type        = string
  default     = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) *"

  validation {
    condition     = trimspace(var.ami_name_filter) != ""
    error_message = "ami_name_filter must not be empty or blank."
  }
}

variable "master_instance_type" {
  description = "EC2 instance type of the master, such as g5.xlarge."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9-]+$", var.master_instance_type))
    error_message = "master_instance_type must be an EC2 instance type such as g5.xlarge."
  }
}

variable "worker_instance_type" {
  description = "EC2 instance type of the workers, such as g5.xlarge."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9-]+$", var.worker_instance_type))
    error_message = "worker_instance_type must be an EC2 instance type such as g5.xlarge."
  }
}

# Its range (8-16384 GiB, and at least the AMI's root snapshot) is a precondition of the instances.
variable "root_volume_gb" {
  description = "Size of each node's root volume in GiB (8-16384); at least the AMI's root snapshot (about 100 GiB for the Deep Learning AMIs is safe)."
  type        = number
}

variable "root_volume_type" {
  description = "EBS type of the root volumes: gp3 or gp2 (types that need provisioned IOPS or cannot boot are not offered)."
  type        = string
  default     = "gp3"

  validation {
    condition     = contains(["gp3", "gp2"], var.root_volume_type)
    error_message = "root_volume_type must be gp3 or gp2."
  }
}

variable "use_default_vpc" {
  description = "Put the nodes into a default subnet of the region's default VPC instead of creating a VPC."
  type        = bool
  default     = false
}

variable "availability_zone" {
  description = "Availability zone of the nodes, such as us-east-1a (empty: EC2 or the default VPC's first default subnet decides). Pick one that offers both instance types."
  type        = string
  default     = ""

  validation {
    condition     = var.availability_zone == "" || can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+[a-z]$", var.availability_zone))
    error_message = "availability_zone must be a zone name such as us-east-1a, or empty."
  }
}

# "Not spot together with placement_group" is a precondition of the placement group in main.tf
# (Terraform < 1.9 cannot refer to another variable in a validation block).
variable "spot" {
  description = "Launch every node as a one-time Spot Instance, terminated on interruption (draws on the Spot vCPU quotas)."
  type        = bool
  default     = false
}

variable "spot_max_price" {
  description = "Highest hourly price in USD for a Spot Instance, such as \"0.50\" (empty: the On-Demand price). Only with spot."
  type        = string
  default     = ""

  validation {
    condition     = var.spot_max_price == "" || can(regex("^[0-9]+(\\.[0-9]+)?$", var.spot_max_price))
    error_message = "spot_max_price must be a price such as \"0.50\", or empty."
  }
}

variable "placement_group" {
  description = "Launch every node into a new cluster placement group (one zone, low-latency network between nodes). Not with spot."
  type        = bool
  default     = false
}
