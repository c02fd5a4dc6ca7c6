# The agents connected in the EU that run an older agent.
data "warren_tunnel_sessions" "old_eu" {
  filter = "obj.region == \"eu\" && obj.agent_version != \"3.2.0\""
}
