# A variable nobody uses, one used but never declared, and credentials in the provider block.
# expect: variable unused: declared but never used
# expect: resource openstack_compute_keypair_v2.key: var.key_name is not declared
# expect: provider openstack: "password" is a credential
# expect: provider openstack: unknown provider argument "os_cloud"
provider "openstack" {
  cloud    = "mycloud"
  password = "hunter2"
  os_cloud = "mycloud"
}

variable "unused" {
  type    = string
  default = ""
}

resource "openstack_compute_keypair_v2" "key" {
  name = var.key_name
}
