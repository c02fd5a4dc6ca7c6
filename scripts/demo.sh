#!/usr/bin/env bash
# make demo: start warren-apiserver on a fresh embedded database, apply examples/quickstart
# through a dev_overrides CLI config, show the outputs, prove the next plan is empty,
# serve a request through the quickstart's edge and an agent to a small local app, show one
# refused by a module and one sent to a sign-in, destroy, and stop the server. Needs the binaries in ./bin, terraform,
# curl and openssl on PATH.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
work=$(mktemp -d)
port=${WARREN_DEMO_PORT:-18080}
sink_port=$((port + 1))
edge_port=$((port + 2))
app_port=$((port + 3))
server_pid=""
sink_pid=""
agent_pid=""
app_pid=""

cleanup() {
  if [ -n "$app_pid" ]; then
    kill "$app_pid" 2>/dev/null || true
    wait "$app_pid" 2>/dev/null || true
  fi
  if [ -n "$agent_pid" ]; then
    kill "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
  fi
  if [ -n "$sink_pid" ]; then
    kill "$sink_pid" 2>/dev/null || true
    wait "$sink_pid" 2>/dev/null || true
  fi
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "Starting examples/event-sink on 127.0.0.1:$sink_port (a local logs intake for the quickstart's events)"
"$bin/warren-event-sink" --listen "127.0.0.1:$sink_port" --api-key quickstart-demo-key >"$work/events.jsonl" 2>"$work/sink.log" &
sink_pid=$!

step "Starting examples/demo-app on 127.0.0.1:$app_port (the local app the agent serves)"
"$bin/warren-demo-app" --listen "127.0.0.1:$app_port" 2>"$work/app.log" &
app_pid=$!

step "Making a certificate for app.example.com (a throwaway CA, with openssl)"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=Warren demo CA" \
  -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=app.example.com" \
  -keyout "$work/app.key" -out "$work/app.csr" 2>/dev/null
printf 'subjectAltName=DNS:app.example.com\nextendedKeyUsage=serverAuth\n' >"$work/app.ext"
openssl x509 -req -in "$work/app.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 1 \
  -extfile "$work/app.ext" -out "$work/app.pem" 2>/dev/null
export TF_VAR_app_certificate_pem TF_VAR_app_private_key_pem
TF_VAR_app_certificate_pem=$(cat "$work/app.pem")
TF_VAR_app_private_key_pem=$(cat "$work/app.key")

step "Starting warren-apiserver on 127.0.0.1:$port (API) and 127.0.0.1:$edge_port (HTTPS edges) with a fresh database"
token=$("$bin/warren-apiserver" token)
WARREN_LISTEN="127.0.0.1:$port" WARREN_DATABASE="$work/warren.db" WARREN_BOOTSTRAP_API_KEY="$token" \
  WARREN_EDGE_HTTPS_LISTEN="127.0.0.1:$edge_port" \
  WARREN_OAUTH_GITHUB_CLIENT_ID=warren-demo WARREN_OAUTH_GITHUB_CLIENT_SECRET=warren-demo-secret \
  WARREN_EVENT_ENDPOINT_OBSERVABILITY="http://127.0.0.1:$sink_port" \
  WARREN_LOG_LEVEL=warn "$bin/warren-apiserver" &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null

# dev_overrides makes terraform use ./bin/terraform-provider-warren without `terraform init`.
cat >"$work/terraformrc" <<RC
provider_installation {
  dev_overrides {
    "registry.terraform.io/warrenhq/warren" = "$bin"
  }
  direct {}
}
RC
mkdir -p "$work/quickstart"
cp "$root"/examples/quickstart/*.tf "$work/quickstart/"
export TF_CLI_CONFIG_FILE="$work/terraformrc" TF_IN_AUTOMATION=1
export WARREN_API_URL="http://127.0.0.1:$port" WARREN_API_KEY="$token"
cd "$work/quickstart"

step "terraform apply (examples/quickstart)"
terraform apply -auto-approve -input=false -no-color

step "Outputs"
terraform output -no-color

step "Events delivered to examples/event-sink"
for _ in $(seq 1 100); do
  grep -q '"event_subscription_created.v0"' "$work/events.jsonl" 2>/dev/null && break
  sleep 0.1
done
if ! grep -q '"event_subscription_created.v0"' "$work/events.jsonl"; then
  cat "$work/sink.log" >&2
  echo "demo: the event sink received no event_subscription_created.v0" >&2
  exit 1
fi
grep -o '"event_type":"[^"]*"' "$work/events.jsonl"

api() { curl -fsS -H "Authorization: Bearer $token" -H "Service-Version: 2" -H "Content-Type: application/json" "$@"; }

step "Starting warren-agent with the quickstart's authtoken, in the shop's tunnel group (app=shop)"
WARREN_AGENT_AUTHTOKEN=$(terraform output -raw agent_authtoken) "$bin/warren-agent" \
  --server "http://127.0.0.1:$port" --label app=shop --forwards-to "http://127.0.0.1:$app_port" 2>"$work/agent.log" &
agent_pid=$!
for _ in $(seq 1 100); do
  api "http://127.0.0.1:$port/tunnels" | grep -q '"tn_' && break
  sleep 0.1
done
if ! api "http://127.0.0.1:$port/tunnels" | grep -q '"tn_'; then
  cat "$work/agent.log" >&2
  echo "demo: the agent's tunnel did not appear" >&2
  exit 1
fi
api "http://127.0.0.1:$port/tunnel_sessions" | grep -o '"id":"ts_[^"]*"' | head -1
terraform apply -refresh-only -auto-approve -input=false -no-color >/dev/null
echo "The tunnel group lists the agent's tunnel:"
terraform output -no-color shop_tunnels

edge() { curl -sS --resolve "app.example.com:$edge_port:127.0.0.1" --cacert "$work/ca.pem" "$@"; }

step "A request through the edge: https://app.example.com/ (edge on 127.0.0.1:$edge_port) -> agent -> demo app"
answer=$(edge "https://app.example.com:$edge_port/hello")
echo "$answer"
case "$answer" in
  "Hello from the demo app"*) ;;
  *) cat "$work/agent.log" >&2; echo "demo: the app did not answer through the edge" >&2; exit 1 ;;
esac

step "A request refused by a module: /admin is only for the office network (ip_restriction)"
status=$(edge -o "$work/refused.txt" -w '%{http_code}' "https://app.example.com:$edge_port/admin")
echo "HTTP $status: $(cat "$work/refused.txt")"
if [ "$status" != 403 ]; then
  echo "demo: /admin from this machine should be refused with 403" >&2
  exit 1
fi

step "A protected route: /account sends a visitor without a session to GitHub to sign in (oauth)"
edge -o /dev/null -D "$work/login.txt" "https://app.example.com:$edge_port/account/orders"
location=$(grep -i '^location:' "$work/login.txt" | tr -d '\r' | cut -d' ' -f2-)
echo "$(head -1 "$work/login.txt" | tr -d '\r') -> $location"
case "$location" in
  https://github.com/login/oauth/authorize?*client_id=warren-demo*) ;;
  *) echo "demo: /account should redirect to GitHub's sign-in" >&2; exit 1 ;;
esac

step "terraform plan after apply: expecting no changes"
set +e
terraform plan -detailed-exitcode -input=false -no-color >"$work/plan.txt" 2>&1
code=$?
set -e
if [ "$code" -ne 0 ]; then
  cat "$work/plan.txt"
  echo "demo: the plan after apply is not empty (exit $code)" >&2
  exit 1
fi
grep -E 'No changes' "$work/plan.txt"

step "Stopping the agent through the API (POST /tunnel_sessions/{id}/stop)"
session=$(api "http://127.0.0.1:$port/tunnel_sessions" | grep -o '"id":"ts_[^"]*"' | head -1 | cut -d'"' -f4)
api -X POST -d '{}' "http://127.0.0.1:$port/tunnel_sessions/$session/stop"
wait "$agent_pid"
echo "warren-agent exited with status $?"
agent_pid=""

step "terraform destroy"
terraform destroy -auto-approve -input=false -no-color

step "Stopping the server"
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""
echo "Demo finished: apply, a request served through the edge, one refused by a module, one sent to a sign-in, an empty plan and destroy all worked."
