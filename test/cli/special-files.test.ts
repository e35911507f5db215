/**
 * Special files in the directories svc reads (issue 41 item 10): a FIFO named like a manifest
 * (`x.v1.abcdef012345.manifest.json`) or standing in for a manifest's CGS, in the catalog
 * directory, and a FIFO named like a run snapshot in a `file://` artifact directory, are never
 * read: `svc serve` (the real process) starts, names them as problems, answers /v1/health, a
 * reload answers, and a GET of the snapshot's id answers `unknown_run`. A plain read of a FIFO
 * waits for a writer: start-up, the reload and the GET hung.
 */
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readdir, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, serve } from '../_helpers/cli.js';

const SECRET = 'special-files-secret-7c1e';
/** Generous liveness bound of one request: a read that blocks on a FIFO never answers. */
const ANSWER_MS = 15_000;

async function tmp(t: Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const get = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(ANSWER_MS) });

t.test('FIFOs in the catalog and artifact directories are skipped, never waited on', async (t) => {
  const catalogs = await tmp(t, 'svc-fifo-catalogs-');
  await cp(join(ROOT, 'fixtures', 'packed'), catalogs, { recursive: true });
  execFileSync('mkfifo', [join(catalogs, 'x.v1.abcdef012345.manifest.json')]);
  // The helpdesk manifest stays; its CGS becomes a FIFO.
  const helpdeskCgs = (await readdir(catalogs)).find((n) => /^helpdesk\..*\.cgs\.json$/.test(n))!;
  await unlink(join(catalogs, helpdeskCgs));
  execFileSync('mkfifo', [join(catalogs, helpdeskCgs)]);
  const artifacts = await tmp(t, 'svc-fifo-artifacts-');
  const runId = `pr${'a'.repeat(64)}`;
  execFileSync('mkfifo', [join(artifacts, `${runId}.json`)]);

  const p = await serve(t, ['--catalog-dir', catalogs, '--port', '0'], {
    SVC_CONTROL_PLANE_SECRET: SECRET,
    SVC_RUN_ARTIFACTS_URL: pathToFileURL(artifacts).href,
  });
  t.match(
    p.stdout + p.stderr,
    /x\.v1\.abcdef012345\.manifest\.json[^\n]*not a regular file: a FIFO|not a regular file: a FIFO[^\n]*x\.v1\.abcdef012345\.manifest\.json/,
  );
  t.match(p.stdout + p.stderr, new RegExp(`${helpdeskCgs.replace(/\./g, '\\.')}\`, which is a FIFO`));

  const health = await get(`${p.url}/v1/health`);
  t.equal(health.status, 200, 'the server answers');
  await health.body?.cancel();

  const reload = await get(`${p.url}/internal/catalog-registry/v1/reload`, {
    method: 'POST',
    headers: { 'x-svc-control-plane-secret': SECRET, accept: 'application/json' },
  });
  const body = (await reload.json()) as {
    entries: Array<{ entry_id: string }>;
    problems: Array<{ code: string; message: string }>;
  };
  t.equal(reload.status, 200, 'the reload answers');
  t.same(
    body.entries.map((e) => e.entry_id),
    ['brewery'],
  );
  t.same(
    body.problems.map((x) => x.code),
    ['artifact_unreadable', 'artifact_unreadable'],
  );
  t.match(body.problems.map((x) => x.message).join('\n'), /not a regular file: a FIFO/);

  const open = await get(`${p.url}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ entry_id: 'brewery', seeds: ['brewery:Brewery'] }),
  });
  t.equal(open.status, 201);
  const session = (await open.json()) as { prompt_hash: string; session: string };
  const snapshot = await get(`${p.url}/execute/${session.prompt_hash}/${session.session}/artifacts/${runId}`, {
    headers: { accept: 'application/json' },
  });
  t.equal(snapshot.status, 404, 'a FIFO under a snapshot name is no snapshot');
  t.match(await snapshot.json(), { errors: [{ code: 'unknown_run' }] });
});
