import t from 'tap';
import { patternExample } from '../../pack/pattern-example.js';
import { constraintExample } from '../../pack/param-constraints.js';
import type { ParamDef } from '../../pack/cgs.js';
import { prng } from '../_helpers/prng.js';

/** Id and key patterns as vendor documents write them. */
const PATTERNS = [
  '^IS[0-9a-fA-F]{32}$',
  '[a-f0-9]{32}',
  '^arn:aws:refactor-spaces:[a-zA-Z0-9\\-]+:\\w{12}:[a-zA-Z_0-9+=,.@\\-_/]+$',
  '^[A-Za-z0-9][A-Za-z0-9-]+[A-Za-z0-9]$',
  '^arn:[a-z0-9]{1,10}:profile',
  'arn:aws:kinesisvideo:[a-z0-9-]+:[0-9]+:[a-z]+/[a-zA-Z0-9_.-]+/[0-9]+',
  '^(?:cus|acct)_[A-Za-z0-9]{14,}$',
  '^(?<kind>[a-z]+)-\\d{2,4}$',
  '(a|bc)+d?e*',
  '[^a-z]{2}',
  '\\d{3}-\\d{4}',
  '^[a-z]{2}(-[A-Z]{2})?$',
  '^\\x41\\u0042[\\]\\-]$',
  '^\\S+@\\S+\\.\\w{2,}$',
  '^[.]{3}\\.{2}$',
];

t.test('a sample of each pattern matches it', async (t) => {
  for (const pattern of PATTERNS) {
    const sample = patternExample(pattern);
    t.ok(sample !== undefined && new RegExp(pattern, 'u').test(sample), `${pattern} -> ${JSON.stringify(sample)}`);
  }
  t.equal(patternExample('^IS[0-9a-fA-F]{32}$'), `IS${'0'.repeat(32)}`, 'the fewest repeats, the first of a class');
  t.equal(patternExample('^(?:cus|acct)_[A-Za-z0-9]{14,}$'), `cus_${'A'.repeat(14)}`, 'the first alternative');
});

t.test('what a sample cannot follow is undefined, never a throw', async (t) => {
  for (const pattern of ['^(?=x)a', '(?!a)b', '(a)\\1', '\\k<x>', '\\p{L}+', '[', '(ab', 'a\\', '[^\\s\\S]'])
    t.equal(patternExample(pattern), undefined, pattern);
});

t.test('random patterns: every sample of a pattern the platform compiles matches it', async (t) => {
  const rnd = prng(7);
  const parts = [
    'a',
    'Z',
    '\\d',
    '\\w',
    '.',
    '[a-c]',
    '[^x]',
    '(',
    ')',
    '|',
    '?',
    '*',
    '+',
    '{2}',
    '{1,3}',
    '\\',
    '-',
    '[0-9_]',
  ];
  let checked = 0;
  for (let i = 0; i < 3000; i++) {
    let p = '';
    const n = 1 + Math.floor(rnd() * 8);
    for (let j = 0; j < n; j++) p += parts[Math.floor(rnd() * parts.length)];
    // Anchors only where vendors write them: an anchor inside may make a pattern match nothing.
    if (rnd() < 0.5) p = `^${p}`;
    if (rnd() < 0.5) p = `${p}$`;
    const sample = patternExample(p);
    let re: RegExp | undefined;
    try {
      re = new RegExp(p, 'u');
    } catch {
      re = undefined;
    }
    if (sample === undefined || !re) continue;
    checked++;
    if (!re.test(sample)) t.fail(`${p} -> ${JSON.stringify(sample)}`);
  }
  t.ok(checked > 500, `${checked} samples of valid patterns checked`);
});

t.test('constraintExample takes the pattern sample when it fits the lengths', async (t) => {
  const p = (extra: Partial<ParamDef>): ParamDef =>
    ({ name: 'sid', type: 'string', required: true, ...extra }) as ParamDef;
  t.equal(constraintExample(p({ pattern: '^IS[0-9a-fA-F]{32}$' })), `IS${'0'.repeat(32)}`);
  t.equal(constraintExample(p({ pattern: '[a-f0-9]{32}' })), 'a'.repeat(32));
  const arn = constraintExample(
    p({
      pattern: '^arn:aws:kinesisvideo:[a-z0-9-]+:[0-9]+:[a-z]+/[a-zA-Z0-9_.-]+/[0-9]+$',
      minLength: 1,
      maxLength: 1024,
    }),
  );
  t.match(arn, /^arn:aws:kinesisvideo:/);
});
