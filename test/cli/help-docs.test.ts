/**
 * docs/cli.md shows `svc --help` verbatim, has a section per command, and names every option of
 * the commands that have options: the doc cannot drift from the CLI without this test failing.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_LIMITS } from '../../server/limits.js';
import { childEnv, ROOT, svcArgv } from '../_helpers/cli.js';

const run = async (...args: string[]) =>
  (await promisify(execFile)(process.execPath, svcArgv(args), { cwd: ROOT, env: childEnv() })).stdout;
const doc = await readFile(join(ROOT, 'docs', 'cli.md'), 'utf8');

t.test('the `svc --help` block of docs/cli.md is the real output', async (t) => {
  const block = /```\n\$ svc --help\n([\s\S]*?)```/.exec(doc);
  t.ok(block, 'docs/cli.md has a `$ svc --help` block');
  t.equal(block?.[1], await run('--help'));
});

for (const command of ['pack', 'catalogs', 'schemas', 'serve', 'demo', 'init', 'search', 'context', 'run']) {
  t.test(`docs/cli.md documents every option of svc ${command}`, async (t) => {
    t.match(doc, `## \`svc ${command}\``, 'a section per command');
    const help = await run(command, '--help');
    const flags = [...help.matchAll(/^\s+(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]!).filter((f) => f !== '--help');
    t.ok(flags.length > 0, `${command} has options`);
    const section = doc.slice(doc.indexOf(`## \`svc ${command}\``)).split(/\n## /)[0] ?? '';
    for (const f of flags) t.ok(section.includes(`\`${f}`), `${f} is documented in the ${command} section`);
  });
}

for (const command of ['doctor', 'login']) {
  t.test(`docs/cli.md has a section for svc ${command}`, async (t) => {
    t.match(doc, `## \`svc ${command}\``);
    t.match(await run(command, '--help'), `Usage: svc ${command}`);
  });
}

t.test('svc serve --help gives the default caps of running operations from DEFAULT_LIMITS', async (t) => {
  const help = await run('serve', '--help');
  t.match(help, `per session (default ${DEFAULT_LIMITS.maxRunningOpsPerSession})`);
  t.match(help, `in the server (default ${DEFAULT_LIMITS.maxRunningOps})`);
});
