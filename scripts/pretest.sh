#!/usr/bin/env bash
# npm pretest: the system programs the tests start themselves (redis-server; openssl, which makes
# the test CA of the mTLS tests; chromium, the browser of the playground's end-to-end tests,
# test/web/e2e-*.test.ts; all Debian packages). A missing one is installed when we are
# root with apt-get; otherwise the run stops with one line naming the command to run. Tests never
# skip for want of one.
set -euo pipefail

need() {
  local cmd=$1 pkg=$2
  command -v "$cmd" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "pretest: installing the Debian package $pkg (the tests start $cmd)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null 2>&1 ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null; }
    command -v "$cmd" >/dev/null 2>&1 && return 0
  fi
  echo "the tests need $cmd: run apt-get install -y $pkg (as root), then npm test again" >&2
  exit 1
}

need redis-server redis-server
need openssl openssl
need chromium chromium
