/**
 * `svc context [-i <intent>] [--new] [--verbose] <CATALOG:ENTITY>...`: fetch and verify the
 * catalogs of the seeds, open or extend the server session, teach the same seeds to the client's
 * own symbol table (`symbols.json`, numbered as the server numbers them), append the new rows to
 * `teaching.tsv`, print the new wave and record `out/NNNN-context/`.
 */
import { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Seed, SymbolTable, Wave } from '../../compiler/symbols.js';
import { renderWave, teachingRules, TEACHING_HEADER } from '../../compiler/teaching.js';
import { Registry, type RegistryEntry } from '../../pack/registry.js';
import { field, firstError, ServerClient, throwIfAuth } from '../terminal/client.js';
import { TERMINAL_EXIT, TerminalError, usageError } from '../terminal/errors.js';
import { safeText } from '../terminal/safe-text.js';
import { readDiscovery } from '../workspace/discovery.js';
import { hostSlug, newSessionId, normalizeServer, paths } from '../workspace/paths.js';
import { loadProfile } from '../workspace/profile.js';
import { entryFromCgs } from '../workspace/fetched-catalog.js';
import { activeSession, ClientSession, setCurrent, type SessionMeta } from '../workspace/session.js';
import { readableWave } from '../../server/execute/read-only.js';

interface ContextFlags {
  intent?: string;
  new?: boolean;
  verbose?: boolean;
}

const SEED = /^([a-z][a-z0-9_-]*):([A-Za-z_][A-Za-z0-9_]*)$/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Seeds as `api:Entity`, unqualified names resolved through the discovery cache (SPEC rules 1). */
export function parseSeeds(args: string[], isNew: boolean, discoveryFile: string): Seed[] {
  const out: Seed[] = [];
  const cache = () => readDiscovery(discoveryFile);
  for (const arg of args) {
    const m = SEED.exec(arg);
    if (m) {
      out.push({ api: m[1]!, entity: m[2]! });
      continue;
    }
    if (isNew)
      throw usageError(
        'bad_seed',
        `--new takes entry_id:Entity seeds, not \`${arg}\``,
        'write for example brewery:Beer',
      );
    if (!NAME.test(arg))
      throw usageError('bad_seed', `\`${arg}\` is not api:Entity or an entity name`, 'write for example brewery:Beer');
    const hits = cache().filter((r) => r.entity === arg);
    if (hits.length === 1) out.push({ api: hits[0]!.api, entity: arg });
    else if (hits.length === 0)
      throw usageError(
        'unknown_seed',
        `\`${arg}\` is not in the discovery cache`,
        'write it as api:Entity, or run `svc search <intent>` first',
      );
    else
      throw usageError(
        'ambiguous_entity',
        `\`${arg}\` names an entity of several catalogs: ${hits.map((h) => `${h.api}:${h.entity}`).join(', ')}`,
        `write one of them: ${hits.map((h) => `${h.api}:${h.entity}`).join(' or ')}`,
      );
  }
  const seen = new Set<string>();
  return out.filter((s) => {
    const k = `${s.api}:${s.entity}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Seeds grouped by catalog in lexicographic order (the seed order within a catalog is kept). */
export function orderSeeds(seeds: Seed[]): Seed[] {
  return [...seeds].sort((a, b) => (a.api === b.api ? 0 : a.api < b.api ? -1 : 1));
}

const seedText = (s: Seed) => `${s.api}:${s.entity}`;
const waveSize = (w: Wave) => w.entities.length + w.capabilities.length + w.relations.length;
const rowsOf = (tsv: string) => tsv.split('\n').slice(1).filter(Boolean);

export function contextCommand(): Command {
  return new Command('context')
    .description('open or extend the session with api:Entity seeds; prints the new teaching rows (TSV)')
    .argument('<seeds...>', 'seeds: CATALOG:ENTITY (or an entity name the discovery cache knows in one catalog)')
    .option('-i, --intent <intent>', 'the intent of a new session (part of its prompt_hash)')
    .option('--new', 'start a new client session (every seed must be entry_id:Entity)')
    .option('--verbose', 'print a banner on stderr before the wave')
    .action(async (args: string[], opts: ContextFlags) => {
      const { root, profile } = loadProfile();
      const client = new ServerClient(profile);
      const slug = hostSlug(profile.server);
      const seeds = orderSeeds(parseSeeds(args, !!opts.new, paths.discovery(root, slug)));
      const existing = opts.new ? undefined : activeSession(root, slug);
      const session = existing ?? new ClientSession(root, newSessionId());
      const meta: SessionMeta = existing
        ? existing.readMeta()
        : {
            server: normalizeServer(profile.server),
            prompt_hash: '',
            session: '',
            intent: opts.intent ?? '',
            created: new Date().toISOString(),
            catalogs: [],
            seeds: [],
          };

      // Catalogs: the pinned ones must not have changed; new ones are fetched with their CGS and verified.
      const entries = new Map<string, RegistryEntry>();
      if (existing) {
        for (const [api, entry] of registryEntries(existing.registry(meta))) entries.set(api, entry);
        for (const c of meta.catalogs) {
          const row = await client.json(`/v1/registry/${encodeURIComponent(c.api)}`, {}, 2);
          if (row.cgs_hash !== c.cgs_hash)
            throw new TerminalError(
              'catalog_changed',
              `catalog ${c.api} changed on the server (${c.cgs_hash.slice(0, 12)} -> ${field(row.cgs_hash).slice(0, 12)}); this session's symbols may mean something else now`,
              `start a new session: svc context --new ${meta.seeds.join(' ') || 'api:Entity'}`,
              TERMINAL_EXIT.program,
            );
        }
      }
      const fetched: Array<{ api: string; cgs: unknown }> = [];
      for (const api of [...new Set(seeds.map((s) => s.api))]) {
        if (entries.has(api)) continue;
        const row = await client.json(`/v1/registry/${encodeURIComponent(api)}?include_cgs=true`, {}, 2);
        entries.set(api, entryFromCgs(api, row.cgs, field(row.cgs_hash)));
        fetched.push({ api, cgs: row.cgs });
      }
      const registry = new Registry([...entries.values()]);
      for (const s of seeds)
        if (!registry.entity(s.api, s.entity))
          throw usageError(
            'bad_seed',
            `${s.api} has no entity \`${s.entity}\``,
            `entities of ${s.api}: ${registry
              .get(s.api)!
              .cgs.entities.map((e) => `${s.api}:${e.name}`)
              .join(', ')}`,
          );

      // The server session first (it can refuse), then the client's symbols, taught in the same order.
      const symbols = existing ? existing.readSymbols() : session.readSymbols();
      const steps: Array<{ seeds: Seed[]; serverWave: string; readOnly: boolean }> = [];
      const opened = !existing;
      if (opened) {
        const primary = seeds[0]!.api;
        const first = seeds.filter((s) => s.api === primary);
        const open = await client.json(
          '/execute',
          {
            body: JSON.stringify({ entry_id: primary, intent: meta.intent, seeds: first.map(seedText) }),
            contentType: 'application/json',
          },
          2,
        );
        meta.prompt_hash = field(open.prompt_hash);
        meta.session = field(open.session);
        steps.push({ seeds: first, serverWave: field(open.wave), readOnly: open.read_only === true });
        const rest = seeds.filter((s) => s.api !== primary);
        if (rest.length) steps.push({ seeds: rest, ...(await extend(client, meta, rest)) });
      } else {
        steps.push({ seeds, ...(await extend(client, meta, seeds)) });
      }

      const rows: string[] = [];
      const repeated: Seed[] = [];
      let added = 0;
      for (const step of steps) {
        // A read-only caller is taught no write (the server says so); its symbols are numbered the same.
        const exposed = symbols.expose(registry, step.seeds);
        const wave = step.readOnly ? readableWave(exposed, registry) : exposed;
        repeated.push(...wave.repeated);
        added += waveSize(wave);
        const local = waveSize(wave) ? renderWave(wave, registry, symbols) : '';
        if (local !== step.serverWave && !(local === '' && step.serverWave === TEACHING_HEADER))
          process.stderr.write(
            'svc: warning: the server taught this wave differently from the local symbol table; programs compile against the local one (see symbols.json)\n',
          );
        rows.push(...rowsOf(local));
      }

      // Record.
      for (const s of seeds) if (!meta.seeds.includes(seedText(s))) meta.seeds.push(seedText(s));
      for (const api of [...new Set(seeds.map((s) => s.api))].sort())
        if (!meta.catalogs.some((c) => c.api === api))
          meta.catalogs.push({ api, cgs_hash: entries.get(api)!.cgs_hash });
      session.writeMeta(meta);
      for (const f of fetched) session.writeCatalog(f.api, f.cgs);
      session.writeSymbols(symbols);
      const waveTsv = [TEACHING_HEADER, ...rows].join('\n') + '\n';
      if (opened) session.appendTeaching(`${teachingRules()}\n${waveTsv}`);
      else if (rows.length) session.appendTeaching(rows.join('\n') + '\n');
      const dir = session.newRecord('context');
      writeFileSync(join(dir, 'wave.tsv'), waveTsv);
      writeFileSync(
        join(dir, 'meta.json'),
        JSON.stringify(
          {
            client_session: session.id,
            opened,
            prompt_hash: meta.prompt_hash,
            session: meta.session,
            seeds: seeds.map(seedText),
            repeated: repeated.map(seedText),
            catalogs: meta.catalogs,
            domain_revision: symbols.domainRevision,
            new_symbols: added,
            at: new Date().toISOString(),
          },
          null,
          2,
        ) + '\n',
      );
      setCurrent(root, slug, session.id);

      if (opts.verbose) process.stderr.write(banner(session, meta, symbols, added, opened));
      if (repeated.length)
        process.stderr.write(
          `already taught: ${repeated.map((r) => `${symbols.entitySymbol(r.api, r.entity)?.sym} (${seedText(r)})`).join(', ')}\n`,
        );
      process.stdout.write(safeText(waveTsv));
    });
}

async function extend(
  client: ServerClient,
  meta: SessionMeta,
  seeds: Seed[],
): Promise<{ serverWave: string; readOnly: boolean }> {
  const a = await client.request(`/execute/${meta.prompt_hash}/${meta.session}/context`, {
    body: JSON.stringify({ seeds: seeds.map(seedText) }),
    contentType: 'application/json',
  });
  throwIfAuth(a, client.base, [...meta.seeds, ...seeds.map(seedText)]);
  if (a.status >= 200 && a.status < 300 && a.json)
    return { serverWave: field(a.json.wave), readOnly: a.json.read_only === true };
  const e = firstError(a);
  const gone = e.code === 'unknown_session' || e.code === 'session_stale';
  throw new TerminalError(
    e.code,
    e.message,
    gone ? `start a new session: svc context --new ${[...meta.seeds, ...seeds.map(seedText)].join(' ')}` : e.hint,
    gone ? TERMINAL_EXIT.program : TERMINAL_EXIT.usage,
  );
}

function registryEntries(r: Registry): Array<[string, RegistryEntry]> {
  return r.list().map((e) => [e.entry_id, e]);
}

function banner(
  session: ClientSession,
  meta: SessionMeta,
  symbols: SymbolTable,
  added: number,
  opened: boolean,
): string {
  return [
    `# svc context: ${opened ? 'new' : 'extended'} client session ${session.id} on ${meta.server} (server session ${meta.prompt_hash}/${meta.session})`,
    `# catalogs: ${meta.catalogs.map((c) => `${c.api}@${c.cgs_hash.slice(0, 12)}`).join(', ')}; domain_revision ${symbols.domainRevision}; ${added} new symbols`,
    ...(opened ? [teachingRules()] : []),
    '',
  ].join('\n');
}
