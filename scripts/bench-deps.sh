#!/usr/bin/env bash
# make bench's tools beyond Go: OpenSSH's server, the traffic section's `ssh -R` floor.
# Installs Debian's openssh-server only when sshd is missing. The section runs its own sshd
# as a child process on a loopback port, whatever the package's service does.
set -euo pipefail
if command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "bench-deps: sshd is missing and there is no apt-get: install OpenSSH's server by hand" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo="sudo"
fi
$sudo apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssh-server
