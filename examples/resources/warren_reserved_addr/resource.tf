# A TCP address for a TCP edge; the server picks host and port.
resource "warren_reserved_addr" "ssh" {
  description = "ssh bastion"
  region      = "eu"
}

output "ssh_address" {
  value = warren_reserved_addr.ssh.addr
}
