#!/usr/bin/env bash
# make bench's tools beyond Go: OpenSSH's server, the traffic section's `ssh -R` floor.
# Installs Debian's openssh-server only when sshd is missing. The section runs its own sshd
# as a child process on a loopback port, whatever the package's service does.
set -euo pipefail
if command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ]; then
  exit 0
fi
exec "$(dirname "$0")/apt-install.sh" "OpenSSH's server (sshd)" openssh-server
