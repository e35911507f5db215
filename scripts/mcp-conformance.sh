#!/usr/bin/env bash
# Runs the official MCP conformance suite (devDependency @modelcontextprotocol/conformance) against
# a running svc /mcp endpoint, on Node 20 too (test/_helpers/globsync-shim.js supplies fs.globSync).
#
#   scripts/mcp-conformance.sh http://127.0.0.1:8080/mcp                     # the generic scenarios
#   scripts/mcp-conformance.sh http://127.0.0.1:8080/mcp --scenario ping     # one scenario
#   scripts/mcp-conformance.sh http://127.0.0.1:8080/mcp --suite all         # every server scenario
#
# Extra arguments go to `conformance server` (--scenario, --suite, -o <dir>, --verbose). Without
# --scenario or --suite it runs the generic scenarios of test/server/mcp-conformance.test.ts one by
# one and exits non-zero when any fails; the others need the reference server's test tools.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
url="${1:?usage: $0 <url of /mcp> [conformance server options]}"
shift
run() {
  node --import "$root/test/_helpers/globsync-shim.js" \
    "$root/node_modules/@modelcontextprotocol/conformance/dist/index.js" server --url "$url" "$@"
}
for a in "$@"; do
  case "$a" in --scenario | --scenario=* | --suite | --suite=*) run "$@"; exit $? ;; esac
done
generic=(server-initialize ping logging-set-level tools-list resources-list prompts-list
  server-sse-multiple-streams dns-rebinding-protection)
failed=()
for s in "${generic[@]}"; do
  echo "=== $s"
  run --scenario "$s" "$@" || failed+=("$s")
done
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all ${#generic[@]} generic scenarios passed"
