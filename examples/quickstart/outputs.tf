output "service_user_id" {
  value = warren_service_user.ci.id
}

output "api_key_id" {
  value = warren_api_key.ci.id
}

output "tunnel_credential_id" {
  value = warren_tunnel_credential.agents.id
}

output "ssh_credential_id" {
  value = warren_ssh_credential.laptop.id
}

output "ssh_certificate_authority_id" {
  value = warren_ssh_certificate_authority.hosts.id
}

output "ssh_certificate_authority_public_key" {
  value = warren_ssh_certificate_authority.hosts.public_key
}

output "reserved_domain_cname_target" {
  value = warren_reserved_domain.app.cname_target
}

output "reserved_addr" {
  value = warren_reserved_addr.ssh.addr
}

output "ip_restriction_id" {
  value = warren_ip_restriction.api.id
}

output "shop_backend_id" {
  value = warren_failover_backend.shop.id
}

output "https_edge_routes" {
  value = { for r in [warren_https_edge_route.shop, warren_https_edge_route.admin] : r.match => r.id }
}

output "event_subscription_id" {
  value = warren_event_subscription.audit.id
}

# The authtoken agents connect with: terraform output -raw agent_authtoken
output "agent_authtoken" {
  value     = warren_tunnel_credential.agents.token
  sensitive = true
}

# The tunnels of connected agents labelled app=shop, as they stand when read: live state,
# so a data source (the resource keeps it out of its state).
data "warren_tunnel_group_backend" "agents" {
  id = warren_tunnel_group_backend.agents.id
}

output "shop_tunnels" {
  value = data.warren_tunnel_group_backend.agents.tunnels
}
