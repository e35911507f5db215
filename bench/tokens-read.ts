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
  return {
    metrics,
    checks: [
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
