#!/usr/bin/env bash
# Installs Debian's chromium for tests/test_report_browser.py when it is absent.
# Never fails the build: without apt-get, root (or password-less sudo) or the network,
# it says so and the browser test skips with the reason.
set -u

if [ -x /usr/bin/chromium ]; then
  echo "browser.sh: $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium') already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "browser.sh: apt-get not available; the browser test will be skipped"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "browser.sh: not root and no password-less sudo; the browser test will be skipped"
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if timeout 600 $SUDO apt-get update -qq && timeout 1200 $SUDO apt-get install -y -qq chromium >/tmp/browser-apt.log 2>&1; then
  echo "browser.sh: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
else
  echo "browser.sh: could not install chromium (see /tmp/browser-apt.log); the browser test will be skipped"
  tail -n 5 /tmp/browser-apt.log 2>/dev/null || true
fi
exit 0
