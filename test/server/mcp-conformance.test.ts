/**
 * /mcp against the official MCP conformance suite (npm @modelcontextprotocol/conformance, the
 * devDependency): a real svc server (startStack, inbound auth off) and, per scenario, the suite's
 * CLI as a child process, `conformance server --url <svc>/mcp --scenario <name> -o <tmp dir>`. A
 * scenario passes when the CLI exits 0 and its checks.json has at least one SUCCESS and no
 * FAILURE (WARNING and INFO checks are advisory, as in the CLI's own verdict).
 *
 * The bundle imports `globSync` from "fs" (Node 22+); on Node 20 test/_helpers/globsync-shim.js,
 * loaded with `--import`, supplies it. scripts/mcp-conformance.sh runs the same by hand.
 *
 * Generic server scenarios, run here (they use no tool, prompt or resource of the suite's
 * reference "everything" server; each must pass):
 *   server-initialize, ping, logging-set-level, tools-list, resources-list, prompts-list,
 *   server-sse-multiple-streams (3 concurrent POSTs on one session), dns-rebinding-protection
 *   (Host/Origin evil.example.com gets 4xx, the server's own 127.0.0.1:port gets 2xx).
 * logging-set-level and prompts-list need /mcp to declare the `logging` and `prompts` capabilities
 * (logging/setLevel answering {}, prompts/list answering a list, empty is fine); without them the
 * SDK answers -32601 Method not found and the scenario fails.
 *
 * Not run: scenarios written for the reference server, which call its special test tools, read
 * its test:// resources or get its test prompts; svc has none of them, so they cannot pass:
 *   completion-complete          completion/complete for the reference prompt test_prompt_with_arguments
 *                                (argument arg1); svc has no prompts and no completions capability
 *   tools-call-simple-text       tool test_simple_text
 *   tools-call-image             tool test_image_content
 *   tools-call-audio             tool test_audio_content
 *   tools-call-embedded-resource tool test_embedded_resource
 *   tools-call-mixed-content     tool test_multiple_content_types
 *   tools-call-with-logging      tool test_tool_with_logging
 *   tools-call-error             tool test_error_handling
 *   tools-call-with-progress     tool test_tool_with_progress
 *   tools-call-sampling          tool test_sampling
 *   tools-call-elicitation       tool test_elicitation
 *   json-schema-2020-12          tool json_schema_2020_12_tool (pending suite)
 *   elicitation-sep1034-defaults tool test_elicitation_sep1034_defaults
 *   elicitation-sep1330-enums    tool test_elicitation_sep1330_enums
 *   server-sse-polling           tool test_reconnection (pending suite)
 *   resources-read-text          resource test://static-text
 *   resources-read-binary        resource test://static-binary
 *   resources-templates-read     resource template test://template/{id}/data
 *   resources-subscribe          resource test://watched-resource and the resources.subscribe capability
 *   resources-unsubscribe        the same
 *   prompts-get-simple           prompt test_simple_prompt
 *   prompts-get-with-args        prompt test_prompt_with_arguments
 *   prompts-get-embedded-resource prompt test_prompt_with_embedded_resource
 *   prompts-get-with-image       prompt test_prompt_with_image
 * The first subtest compares this classification with `conformance list --server`, so a new
 * version of the suite with other scenarios fails here until they are sorted into one list.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { childEnv } from '../_helpers/cli.js';
import { ROOT, startStack } from '../_helpers/server.js';

const GENERIC = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'resources-list',
  'prompts-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

const REFERENCE_ONLY = [
  'completion-complete',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'json-schema-2020-12',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'server-sse-polling',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
];

const SHIM = join(ROOT, 'test', '_helpers', 'globsync-shim.js');
const CONFORMANCE = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist',
  'index.js',
);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Check {
  id: string;
  /** SUCCESS, FAILURE, WARNING or INFO. */
  status: string;
  errorMessage?: string;
  details?: unknown;
}

/** The conformance CLI with `args`, on this Node, with the globSync shim. */
function conformance(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', SHIM, CONFORMANCE, ...args],
      { cwd: ROOT, env: childEnv(), timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

t.test('the suite lists exactly the scenarios this file sorts (generic or reference-only)', async (t) => {
  const r = await conformance(['list', '--server']);
  t.equal(r.code, 0, 'conformance list --server exits 0', { stderr: r.stderr });
  const listed = [...r.stdout.matchAll(/^ {2}- (\S+)/gm)].map((m) => m[1]!);
  t.same(listed.toSorted(), [...GENERIC, ...REFERENCE_ONLY].toSorted(), 'GENERIC + REFERENCE_ONLY', {
    stdout: r.stdout,
  });
});

t.test('generic server scenarios pass against /mcp', async (t) => {
  const stack = await startStack(t);
  const url = `${stack.url}/mcp`;
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/, 'a loopback URL (dns-rebinding-protection needs one)');
  // The scenarios do not share state beyond the server: run them side by side.
  t.jobs = 4;
  for (const scenario of GENERIC)
    t.test(scenario, async (t) => {
      const out = await mkdtemp(join(tmpdir(), 'svc-conformance-'));
      t.teardown(() => rm(out, { recursive: true, force: true }));
      const r = await conformance(['server', '--url', url, '--scenario', scenario, '-o', out]);
      const dirs = await readdir(out);
      t.equal(dirs.length, 1, 'one result directory', { dirs, stdout: r.stdout, stderr: r.stderr });
      if (dirs.length !== 1) return;
      const checks = JSON.parse(await readFile(join(out, dirs[0]!, 'checks.json'), 'utf8')) as Check[];
      const failed = checks.filter((c) => c.status === 'FAILURE');
      t.same(
        failed.map((c) => `${c.id}: ${c.errorMessage ?? ''} ${JSON.stringify(c.details ?? {}).slice(0, 300)}`),
        [],
        'no FAILURE check',
      );
      t.ok(
        checks.some((c) => c.status === 'SUCCESS'),
        `at least one SUCCESS check: ${checks.map((c) => `${c.id}=${c.status}`).join(', ')}`,
      );
      t.equal(r.code, 0, 'the CLI exits 0', { stdout: r.stdout.slice(-4000), stderr: r.stderr.slice(-4000) });
      for (const w of checks.filter((c) => c.status === 'WARNING')) t.comment(`warning ${w.id}: ${w.errorMessage}`);
    });
});
