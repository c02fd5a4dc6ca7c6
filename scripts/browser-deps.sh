#!/usr/bin/env bash
# make test's browser: Debian's headless-capable Chromium, which the login tests of the
# oauth, oidc and saml modules drive with chromedp. Installs it only when it is missing.
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then
    exit 0
  fi
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "browser-deps: Chromium is missing and there is no apt-get: install Chromium by hand" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo="sudo"
fi
$sudo apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
