terraform {
  required_version = ">= 1.5"

  required_providers {
    openstack = {
      source  = "terraform-provider-openstack/openstack"
      version = ">= 3.0"
    }
  }
}

# Credentials come from clouds.yaml (or OS_CLOUD / the OS_* environment), never from variables.
provider "openstack" {
  cloud = var.cloud
}
