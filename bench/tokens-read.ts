/**
 * The `tokens` bench's HTTP part: the rules preamble alone, and a 25-row read in each execute
 * format next to TOON of the bare rows (what the rows alone would cost). Over a real session on the
 * svc child (`POST /execute`, then the program in each format).
 */
import { encode as toon } from '@toon-format/toon';
import { teachingRules } from '../compiler/teaching.js';
import type { Check, Metric } from './harness.js';

export interface Counted {
  tokens: number;
  chars: number;
}

/** A read of 25 rows of six fields (a page of the reviews list). */
export const READ_25 = 'e3[id,beerId,rating,author,text,createdAt]';
const FORMATS = ['text/toon', 'text/plain', 'application/json', 'application/x-ndjson'] as const;

export async function readMetrics(
  url: string,
  count: (s: string) => Counted,
): Promise<{ metrics: Metric[]; checks: Check[] }> {
  const open = await fetch(`${url}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ entry_id: 'brewery', seeds: ['brewery:Brewery', 'brewery:Beer', 'brewery:Review'] }),
  });
  const s = (await open.json()) as { prompt_hash: string; session: string };
  const path = `${url}/execute/${s.prompt_hash}/${s.session}`;
  const answers: Record<string, string> = {};
  for (const accept of FORMATS) {
    const r = await fetch(path, { method: 'POST', headers: { accept, 'content-type': 'text/plain' }, body: READ_25 });
    answers[accept] = await r.text();
    if (r.status !== 200) throw new Error(`${READ_25} as ${accept}: ${r.status} ${answers[accept]}`);
  }
  const rows = (JSON.parse(answers['application/json']!) as { rows: unknown[] }).rows;
  const bare = count(toon(rows));
  const rules = count(teachingRules());
  const metrics: Metric[] = [
    { label: 'rules preamble', value: rules.tokens, unit: 'count', note: `${rules.chars} chars; once per session` },
    {
      label: '25-row read: TOON of the bare rows',
      value: bare.tokens,
      unit: 'count',
      note: `${rows.length} rows of ${READ_25}`,
    },
  ];
  const def = count(answers['text/toon']!);
  for (const accept of FORMATS) {
    const c = count(answers[accept]!);
    metrics.push({
      label: `25-row read: ${accept}`,
      value: c.tokens,
      unit: 'count',
      note: `${(c.tokens / bare.tokens).toFixed(3)} of the bare rows; ${c.chars} chars`,
    });
  }
  const ratio = def.tokens / bare.tokens;
  const more = await sessionMetrics(url, path, count);
  metrics.push(...more.metrics);
  return {
    metrics,
    checks: [
      ...more.checks,
      {
        target: '25-row read in the default format (TOON) within 5% of TOON of the bare rows',
        pass: rows.length === 25 && ratio <= 1.05,
        actual: `${def.tokens} vs ${bare.tokens} (${((ratio - 1) * 100).toFixed(1)}% more), ${rows.length} rows`,
      },
      {
        target: 'rules preamble ≤ 200 tokens',
        pass: rules.tokens <= 200,
        actual: `${rules.tokens} tokens`,
      },
    ],
  };
}

/**
 * The opening answer in TOON and in plain text (TOON must not be dearer), the cumulative teaching
 * of a session after a federated second wave (`/symbols`), and each catalog's tool model.
 */
async function sessionMetrics(
  url: string,
  path: string,
  count: (s: string) => Counted,
): Promise<{ metrics: Metric[]; checks: Check[] }> {
  const opening = async (accept: string) => {
    const r = await fetch(`${url}/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ entry_id: 'helpdesk', intent: 'tokens' }),
    });
    return count(await r.text());
  };
  const toonOpen = await opening('text/toon');
  const plainOpen = await opening('text/plain');
  await fetch(`${path}/context`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ seeds: ['helpdesk:Customer', 'helpdesk:Ticket', 'helpdesk:Comment'] }),
  });
  const symbols = (await (await fetch(`${path}/symbols`)).json()) as { teaching: string };
  const cumulative = count(symbols.teaching);
  const metrics: Metric[] = [
    {
      label: 'opening answer (helpdesk): text/toon',
      value: toonOpen.tokens,
      unit: 'count',
      note: `${toonOpen.chars} chars`,
    },
    {
      label: 'opening answer (helpdesk): text/plain',
      value: plainOpen.tokens,
      unit: 'count',
      note: `${plainOpen.chars} chars`,
    },
    {
      label: 'cumulative teaching, brewery + helpdesk',
      value: cumulative.tokens,
      unit: 'count',
      note: `${cumulative.chars} chars: rules and both waves of one session (GET /symbols)`,
    },
  ];
  for (const id of ['brewery', 'helpdesk']) {
    const model = count(await (await fetch(`${url}/v1/registry/${id}/tool-model`)).text());
    metrics.push({
      label: `tool model: ${id}`,
      value: model.tokens,
      unit: 'count',
      note: `${model.chars} chars (GET /v1/registry/${id}/tool-model)`,
    });
  }
  return {
    metrics,
    checks: [
      {
        target: 'the opening answer in TOON (the default) is not dearer than in plain text',
        pass: toonOpen.tokens <= plainOpen.tokens,
        actual: `${toonOpen.tokens} vs ${plainOpen.tokens}`,
      },
    ],
  };
}
