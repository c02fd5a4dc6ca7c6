#!/usr/bin/env bash
# apt-install.sh WHAT PACKAGE...: install Debian packages for make's tool scripts (as root,
# or through sudo), or fail saying WHAT is missing when there is no apt-get.
set -euo pipefail
what=$1
shift
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$what is missing and there is no apt-get: install it by hand ($*)" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo="sudo"
fi
$sudo apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
