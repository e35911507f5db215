/**
 * A client session under `.svc/s/<id>/`: `meta.txt`, `symbols.json`, `teaching.tsv`,
 * `catalogs/<api>.json`, `latest` and the numbered records `out/NNNN-<kind>/`. The host's
 * `current` file names the active session. Layouts: docs/cli.md "The workspace".
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SymbolTable } from '../../compiler/symbols.js';
import { canonicalHash } from '../../common/canonical.js';
import type { Cgs } from '../../pack/cgs.js';
import { Registry, registryEntry, type RegistryEntry } from '../../pack/registry.js';
import { usageError } from '../terminal/errors.js';
import { damaged, readWorkspaceJson, readWorkspaceText, symbolTableJson } from './damaged.js';
import { paths, SESSION_ID } from './paths.js';

/** What `meta.txt` holds. */
export interface SessionMeta {
  server: string;
  prompt_hash: string;
  session: string;
  intent: string;
  created: string;
  /** Pinned catalogs: entry_id -> cgs_hash, in pin order. */
  catalogs: Array<{ api: string; cgs_hash: string }>;
  /** Seeds taught so far (`api:Entity`), in order. */
  seeds: string[];
}

export function renderMeta(m: SessionMeta): string {
  return [
    `server: ${m.server}`,
    `prompt_hash: ${m.prompt_hash}`,
    `session: ${m.session}`,
    `intent: ${m.intent.replace(/\s+/g, ' ')}`,
    `created: ${m.created}`,
    ...m.catalogs.map((c) => `catalog: ${c.api} ${c.cgs_hash}`),
    ...m.seeds.map((s) => `seed: ${s}`),
    '',
  ].join('\n');
}

export function parseMeta(text: string): SessionMeta {
  const m: SessionMeta = { server: '', prompt_hash: '', session: '', intent: '', created: '', catalogs: [], seeds: [] };
  for (const line of text.split('\n')) {
    const i = line.indexOf(': ');
    if (i < 0) continue;
    const k = line.slice(0, i);
    const v = line.slice(i + 2);
    if (k === 'catalog') {
      const [api = '', cgs_hash = ''] = v.split(' ');
      m.catalogs.push({ api, cgs_hash });
    } else if (k === 'seed') m.seeds.push(v);
    else if (k === 'server' || k === 'prompt_hash' || k === 'session' || k === 'intent' || k === 'created') m[k] = v;
  }
  return m;
}

/**
 * A registry entry of a catalog cached in this session: `svc context` verified it in full when it
 * fetched it (`entryFromCgs`, fetched-catalog.ts); here its content must still hash to the pinned
 * `cgs_hash`, which catches a damaged or edited file without loading the schema validator.
 */
function cachedEntry(api: string, file: string, cgsHash: string): RegistryEntry {
  const cgs = readWorkspaceJson(file) as Cgs;
  if (canonicalHash(cgs) !== cgsHash || cgs.entry_id !== api)
    throw usageError(
      'workspace_damaged',
      `${file} no longer hashes to the pinned ${cgsHash.slice(0, 12)}...`,
      'run `svc context --new` with api:Entity seeds to fetch it again',
    );
  return registryEntry(cgs, cgsHash, `${api}.json`);
}

export class ClientSession {
  constructor(
    readonly root: string,
    readonly id: string,
  ) {}

  get dir(): string {
    return paths.session(this.root, this.id);
  }

  file(name: string): string {
    return join(this.dir, name);
  }

  exists(): boolean {
    return existsSync(this.file('meta.txt'));
  }

  /** `meta.txt`; one without the server session it names is `workspace_damaged`. */
  readMeta(): SessionMeta {
    const file = this.file('meta.txt');
    const meta = parseMeta(readWorkspaceText(file));
    if (!meta.prompt_hash || !meta.session) throw damaged(file, 'names no server session (prompt_hash, session)');
    return meta;
  }

  writeMeta(m: SessionMeta): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(this.file('meta.txt'), renderMeta(m));
  }

  readSymbols(): SymbolTable {
    const f = this.file('symbols.json');
    if (!existsSync(f)) return new SymbolTable();
    return SymbolTable.fromJSON(symbolTableJson(f, readWorkspaceJson(f)));
  }

  writeSymbols(t: SymbolTable): void {
    writeFileSync(this.file('symbols.json'), JSON.stringify(t.toJSON(), null, 2) + '\n');
  }

  /** Append text (already newline-terminated) to teaching.tsv. */
  appendTeaching(text: string): void {
    const f = this.file('teaching.tsv');
    const old = existsSync(f) ? readWorkspaceText(f) : '';
    writeFileSync(f, old + text);
  }

  writeCatalog(api: string, cgs: unknown): void {
    mkdirSync(this.file('catalogs'), { recursive: true });
    writeFileSync(join(this.file('catalogs'), `${api}.json`), JSON.stringify(cgs) + '\n');
  }

  /** The registry of the catalogs fetched into this session, verified against meta.txt's hashes. */
  registry(meta: SessionMeta): Registry {
    return new Registry(
      meta.catalogs.map((c) => {
        const f = join(this.file('catalogs'), `${c.api}.json`);
        if (!existsSync(f))
          throw usageError('workspace_damaged', `${f} is missing`, 'run `svc context --new` with api:Entity seeds');
        return cachedEntry(c.api, f, c.cgs_hash);
      }),
    );
  }

  /**
   * A new `out/NNNN-<kind>/` directory, and `latest` names it. Safe under concurrent commands on
   * one session: the number is reserved first by creating `numbers/NNNN` exclusively (`wx`), a
   * name every kind shares, so two processes never get the same NNNN even for different kinds
   * (`out/0005-run` and `out/0005-search` are different names: an exclusive mkdir of the record
   * alone would not stop that). A taken number (EEXIST) moves on to the next. The scan of `out/`
   * and `numbers/` only picks where to start: records made before `numbers/` existed count too.
   */
  newRecord(kind: string): string {
    const out = this.file('out');
    const numbers = this.file('numbers');
    mkdirSync(out, { recursive: true });
    mkdirSync(numbers, { recursive: true });
    const highest = (dir: string) =>
      readdirSync(dir).reduce((max, d) => Math.max(max, Number(/^(\d{4,})(?:-|$)/.exec(d)?.[1] ?? 0)), 0);
    for (let n = Math.max(highest(out), highest(numbers)) + 1; ; n++) {
      const num = String(n).padStart(4, '0');
      try {
        writeFileSync(join(numbers, num), '', { flag: 'wx' });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw e;
      }
      const name = `${num}-${kind}`;
      mkdirSync(join(out, name));
      this.writeAtomic('latest', `out/${name}\n`);
      return join(out, name);
    }
  }

  /** Write a session file by renaming a temporary file over it, so a reader never sees half of it. */
  private writeAtomic(name: string, text: string): void {
    const tmp = this.file(`.${name}.${process.pid}.${randomBytes(4).toString('hex')}`);
    writeFileSync(tmp, text);
    renameSync(tmp, this.file(name));
  }
}

/** The active session of a host, if `current` names one that exists. */
export function activeSession(root: string, slug: string): ClientSession | undefined {
  const f = paths.current(root, slug);
  if (!existsSync(f)) return undefined;
  const id = readWorkspaceText(f).trim();
  if (!SESSION_ID.test(id)) return undefined;
  const s = new ClientSession(root, id);
  return s.exists() ? s : undefined;
}

export function setCurrent(root: string, slug: string, id: string): void {
  mkdirSync(paths.host(root, slug), { recursive: true });
  writeFileSync(paths.current(root, slug), `${id}\n`);
}
