#!/usr/bin/env bash
# make test's browser: Debian's headless-capable Chromium, which the login tests of the
# oauth, oidc and saml modules drive with chromedp. Installs it only when it is missing.
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then
    exit 0
  fi
done
exec "$(dirname "$0")/apt-install.sh" Chromium chromium
