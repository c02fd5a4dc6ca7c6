data "warren_tunnel_session" "agent" {
  id = "ts_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}

output "agent_ip" {
  value = data.warren_tunnel_session.agent.ip
}
