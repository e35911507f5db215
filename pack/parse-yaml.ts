/**
 * The YAML dialect of catalog sources, in one place: YAML 1.2 with the core schema, read by the
 * `yaml` library (the only YAML parser svc uses), with positions for every diagnostic.
 *
 * - `0o7` and `0x1f` are integers, `0b1`, `yes`, `on` and `1_000` are strings;
 * - a `%YAML` directive other than 1.2 and tags outside the core schema (`!!binary`, `!!set`,
 *   `!custom`) are refused rather than read with another meaning;
 * - a key written twice in one map is refused, also when only the JSON object would merge them
 *   (`1` and `"1"`); collection keys are refused (JSON keys are strings);
 * - anchors and aliases work, but aliases may add at most `MAX_ALIAS_NODES` nodes to a file, so an
 *   alias bomb is refused after one linear walk, before anything is expanded.
 *
 * Duplicate keys are checked here with one `Set` per map: `yaml`'s own check (`uniqueKeys`) scans
 * the map for every key, which is quadratic in the keys of one map.
 */
import {
  isAlias,
  isMap,
  isNode,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Alias,
  type Document,
  type Node,
} from 'yaml';
import type { Span, SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';

/** Aliases may add at most this many nodes (scalars, lists, maps) to one file. */
export const MAX_ALIAS_NODES = 100_000;

const OPTIONS = {
  version: '1.2',
  schema: 'core',
  resolveKnownTags: false,
  merge: false,
  uniqueKeys: false,
  strict: true,
  prettyErrors: false,
} as const;

export interface ParsedYaml {
  doc: Document;
  lines: LineCounter;
  /** The document as plain data; absent when there is an error. */
  data?: unknown;
  errors: SvcError[];
}

/** Parse one catalog source file; every problem comes back as a diagnostic with file:line:col. */
export function parseYaml(text: string, file: string): ParsedYaml {
  const lines = new LineCounter();
  const doc = withPlainEnv(() => parseDocument(text, { ...OPTIONS, lineCounter: lines }));
  const span = (offset: number): Span => ({ file, ...lines.linePos(offset) });
  const errors: SvcError[] = [];
  const version = doc.directives?.yaml.explicit ? doc.directives.yaml.version : '1.2';
  if (version !== '1.2') {
    const at = Math.max(0, text.search(/^%YAML/m));
    errors.push(
      svcError('yaml_syntax', `the file declares YAML ${version}`, {
        span: span(at),
        hint: 'catalog files are YAML 1.2 (core schema): remove the `%YAML` line, and write yes/no as true/false',
      }),
    );
  }
  for (const e of doc.errors) {
    errors.push(
      svcError('yaml_syntax', firstLine(e.message), {
        span: span(e.pos[0]),
        hint: 'fix the YAML syntax at this position',
      }),
    );
  }
  for (const w of doc.warnings) {
    const tag = w.code === 'TAG_RESOLVE_FAILED' ? /^!\S*/.exec(text.slice(w.pos[0]))?.[0] : undefined;
    errors.push(
      tag
        ? svcError('yaml_syntax', `tag \`${tag}\` is not part of the YAML 1.2 core schema`, {
            span: span(w.pos[0]),
            hint: 'remove the tag: catalog values are strings, numbers, true/false, null, lists and maps',
          })
        : svcError('yaml_syntax', firstLine(w.message), {
            span: span(w.pos[0]),
            hint: 'fix the YAML at this position',
          }),
    );
  }
  const walk = new Walk(lines, span);
  const data = doc.contents ? walk.value(doc.contents) : null;
  errors.push(...walk.errors);
  return errors.length ? { doc, lines, errors } : { doc, lines, data, errors };
}

/**
 * yaml 2.x reads `process.env.LOG_TOKENS` for every token, and `process.env` is a slow exotic
 * object: about a third of the parser's time on a large catalog. While the parse runs (it is
 * synchronous: nothing else runs meanwhile) the process sees a plain copy of its environment, and
 * the original object is back before the parse returns or throws.
 */
export function withPlainEnv<T>(fn: () => T): T {
  const env = process.env;
  process.env = { ...env };
  try {
    return fn();
  } finally {
    process.env = env;
  }
}

interface Anchor {
  node: Node;
  /** Nodes it stands for with its aliases expanded; undefined while its own content is walked. */
  size: number | undefined;
  data: unknown;
}

/**
 * One walk over the document in reading order builds the plain data (what `Document.toJS` would,
 * an alias yielding the very value of its anchor) and checks, on the way: duplicate and collection
 * keys, aliases without an anchor or inside their own anchor, and the nodes aliases add.
 */
class Walk {
  readonly errors: SvcError[] = [];
  /** Anchor name -> its latest definition. */
  private readonly anchors = new Map<string, Anchor>();
  /** Nodes walked so far, aliases counted with the size of their anchor. */
  private count = 0;
  /** Of those, the nodes aliases added. */
  private added = 0;

  constructor(
    private readonly lines: LineCounter,
    private readonly span: (offset: number) => Span,
  ) {}

  value(node: Node): unknown {
    if (isAlias(node)) return this.alias(node);
    const start = this.count++;
    let anchor: Anchor | undefined;
    if (node.anchor) {
      anchor = { node, size: undefined, data: undefined };
      this.anchors.set(node.anchor, anchor);
    }
    let data: unknown;
    if (isMap(node)) {
      const obj: Record<string, unknown> = {};
      const seen = new Map<string, number>();
      for (const { key, value } of node.items) {
        const name = this.key(isNode(key) ? key : null, seen);
        const v = isNode(value) ? this.value(value) : null;
        if (name === '__proto__')
          Object.defineProperty(obj, name, { value: v, writable: true, enumerable: true, configurable: true });
        else if (name !== undefined) obj[name] = v;
      }
      data = obj;
    } else if (isSeq(node)) {
      data = node.items.map((item) => (isNode(item) ? this.value(item) : null));
    } else {
      data = isScalar(node) ? node.value : null;
    }
    if (anchor) {
      anchor.size = this.count - start;
      anchor.data = data;
    }
    return data;
  }

  private alias(node: Alias): unknown {
    const at = node.range?.[0] ?? 0;
    const target = this.anchors.get(node.source);
    this.count++;
    if (!target) {
      this.fail(
        at,
        `alias \`*${node.source}\` names no anchor above it`,
        `mark a value with \`&${node.source}\` before this alias`,
      );
      return null;
    }
    if (target.size === undefined) {
      this.fail(
        at,
        `alias \`*${node.source}\` is inside the value its anchor marks`,
        'a value cannot contain itself: write the nested part out',
      );
      return null;
    }
    const before = this.added;
    this.count += target.size - 1;
    this.added += target.size;
    if (before <= MAX_ALIAS_NODES && this.added > MAX_ALIAS_NODES) {
      this.fail(
        at,
        `YAML aliases expand this file by more than ${MAX_ALIAS_NODES} nodes`,
        'write the repeated parts out or use fewer *aliases: aliases are for a few shared pieces, and nested ones multiply',
      );
    }
    return target.data;
  }

  /**
   * Walks a key and returns the name the JSON object holds it under (a null key is "", as `yaml`
   * writes it); undefined when the key is refused (a collection, a duplicate, a broken alias).
   */
  private key(key: Node | null, seen: Map<string, number>): string | undefined {
    if (!key) return '';
    const offset = key.range?.[0] ?? 0;
    const errorsBefore = this.errors.length;
    this.value(key);
    if (this.errors.length > errorsBefore) return undefined;
    const node = isAlias(key) ? this.anchors.get(key.source)?.node : key;
    if (!isScalar(node)) {
      this.fail(
        offset,
        'a map key is a list or a map',
        'write a plain key (a name or a string): the JSON a catalog becomes has string keys only',
      );
      return undefined;
    }
    const name = node.value === null ? '' : scalarText(node.value);
    const first = seen.get(name);
    if (first === undefined) {
      seen.set(name, offset);
      return name;
    }
    const shown = typeof node.source === 'string' ? node.source : scalarText(node.value);
    this.errors.push(
      svcError(
        'duplicate_name',
        `key \`${shown}\` is declared twice in one map (first on line ${this.lines.linePos(first).line})`,
        { span: this.span(offset), hint: 'keep one of the two declarations' },
      ),
    );
    return undefined;
  }

  private fail(offset: number, message: string, hint: string): void {
    this.errors.push(svcError('yaml_syntax', message, { span: this.span(offset), hint }));
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}

/** A scalar key as the JSON object it becomes names it. */
function scalarText(v: unknown): string {
  return typeof v === 'string'
    ? v
    : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint'
      ? String(v)
      : (JSON.stringify(v) ?? '');
}
