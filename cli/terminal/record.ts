/**
 * What `svc run` keeps of one answer: `_meta.svc` read from any of the four formats, and the
 * record `out/NNNN-plan/` or `out/NNNN-run/` (`program.svc`, `plan.json`, `body.txt`,
 * `body.json`, and `artifact.json` / `artifact.txt` of a live run). `record` returns the directory.
 * `body.json` holds the answer as JSON in `body` for every format that carries it losslessly
 * (JSON, TOON, NDJSON); a plain answer keeps its `# key: value` meta only.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  answerJson,
  field,
  formatOf,
  objectOf,
  type HttpAnswer,
  type JsonObject,
  type ServerClient,
} from './client.js';
import type { ClientSession } from '../workspace/session.js';

export const ACCEPT = {
  plain: 'text/plain',
  toon: 'text/toon',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
} as const;
export type AcceptName = keyof typeof ACCEPT;

/**
 * `_meta.svc` of an answer in any of the four formats: from the answer as JSON (JSON, TOON,
 * NDJSON's last line), else from the `# key: value` lines of plain text (values that are JSON
 * objects or arrays parsed).
 */
export function answerMeta(a: HttpAnswer, accept: AcceptName): JsonObject {
  const doc = answerJson(a);
  if (doc !== undefined)
    return { ...a.ids, ...objectOf(objectOf(objectOf(Array.isArray(doc) ? doc.at(-1) : doc)._meta).svc) };
  const format = formatOf(a.contentType) ?? accept;
  if (format === 'json' || format === 'ndjson') return { ...a.ids };
  const out: JsonObject = { ...a.ids };
  const re = format === 'plain' ? /^# ([a-z_]+): (.*)$/gm : /^ {4}([a-z_]+): (.*)$/gm;
  const from = format === 'plain' ? a.text : a.text.slice(a.text.lastIndexOf('_meta:'));
  for (const m of from.matchAll(re)) out[m[1]!] = metaValue(m[2]!);
  return out;
}

function metaValue(v: string): unknown {
  if (/^[[{]/.test(v))
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  return v.replace(/^"(.*)"$/, '$1');
}

export async function record(
  session: ClientSession,
  kind: 'plan' | 'run',
  text: string,
  plan: unknown,
  answer: HttpAnswer,
  accept: AcceptName,
  svcMeta: JsonObject,
  client: ServerClient,
  base: string,
): Promise<string> {
  const dir = session.newRecord(kind);
  writeFileSync(join(dir, 'program.svc'), text.endsWith('\n') ? text : text + '\n');
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan, null, 2) + '\n');
  writeFileSync(join(dir, 'body.txt'), answer.text);
  const runId = svcMeta.run_id;
  const art =
    kind === 'run' && typeof runId === 'string' && /^pr[0-9a-f]{64}$/.test(runId)
      ? await client.request(`${base}/artifacts/${runId}`)
      : undefined;
  const j = art?.status === 200 ? art.json : undefined;
  // A clean read's TOON or plain body leaves its status out; the stored run has it.
  const meta =
    j && svcMeta.status === undefined && typeof j.status === 'string' ? { ...svcMeta, status: j.status } : svcMeta;
  // The answer as JSON where the format carries it losslessly; a plain answer keeps `meta` only.
  const body = answerJson(answer);
  writeFileSync(
    join(dir, 'body.json'),
    JSON.stringify(
      {
        http_status: answer.status,
        content_type: answer.contentType,
        accept,
        meta,
        ...(body !== undefined ? { body } : {}),
      },
      null,
      2,
    ) + '\n',
  );
  if (j) {
    writeFileSync(join(dir, 'artifact.json'), JSON.stringify(j, null, 2) + '\n');
    writeFileSync(
      join(dir, 'artifact.txt'),
      [
        `run_id: ${String(runId)}`,
        `status: ${field(j.status)}`,
        `plan_commit_id: ${field(j.plan_commit_id)}`,
        `started_at: ${field(j.started_at)}`,
        `elapsed_ms: ${field(j.elapsed_ms)}`,
        `steps: ${Array.isArray(j.steps) ? j.steps.length : 0}`,
        '',
      ].join('\n'),
    );
  }
  return dir;
}
