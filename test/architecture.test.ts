/**
 * Stages import one way (STYLE.md): common <- pack <- compiler <- runtime <- server, cli.
 * A lower stage never imports a higher one, and no product code imports test helpers.
 */
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ALLOWED: Record<string, string[]> = {
  common: ['common'],
  pack: ['common', 'pack'],
  compiler: ['common', 'pack', 'compiler'],
  runtime: ['common', 'pack', 'compiler', 'runtime'],
  server: ['common', 'pack', 'compiler', 'runtime', 'server'],
  cli: ['common', 'pack', 'compiler', 'runtime', 'server', 'cli'],
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

t.test('imports point one way between stages', async (t) => {
  let checked = 0;
  for (const [stage, allowed] of Object.entries(ALLOWED)) {
    for (const f of files(stage)) {
      for (const m of readFileSync(f, 'utf8').matchAll(/^(?:import|export)[^'"]*from\s+'(\.[^']+)'/gm)) {
        const target = join(f, '..', m[1]!).split('/')[0]!;
        checked++;
        t.ok(allowed.includes(target), `${f} imports ${m[1]} (stage ${target})`);
      }
    }
  }
  t.ok(checked > 100, `checked ${checked} imports`);
});

t.test('the core stages do no I/O of their own outside their named edge modules', async (t) => {
  const edges = new Set(['pack/read-source.ts', 'pack/write-artifacts.ts', 'pack/load.ts']);
  for (const stage of ['common', 'pack', 'compiler']) {
    for (const f of files(stage)) {
      if (edges.has(f)) continue;
      t.notMatch(readFileSync(f, 'utf8'), /from 'node:(fs|fs\/promises|http|net)'/, `${f} does no file or network I/O`);
    }
  }
});
