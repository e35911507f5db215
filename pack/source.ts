/**
 * Catalog source files: YAML parsed with positions, so that every diagnostic can name the file,
 * line and column. Pure: callers hand in file names and texts (see `read-source.ts` for the I/O).
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { Span, SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import { validateSourceFile } from './ajv.js';
import { schemaProblems } from './schema-errors.js';

export interface SourceText {
  /** File name as shown in diagnostics (relative to where the user pointed). */
  file: string;
  text: string;
}

/** A source file's data (all that normalizing needs). */
export interface SourceData {
  file: string;
  /** The document as plain JSON data. */
  data: Record<string, unknown>;
}

/** A source file parsed with positions (for diagnostics). */
export interface SourceFile extends SourceData {
  doc: Document;
  lines: LineCounter;
}

export type KeyPath = Array<string | number>;

/** Guard against alias bombs: more alias expansions than this are refused. */
export const MAX_ALIAS_COUNT = 10_000;

/** Parse one YAML file. Syntax errors (including duplicate keys) come back as diagnostics. */
export function parseSource(src: SourceText): { source?: SourceFile; errors: SvcError[] } {
  const lines = new LineCounter();
  const doc = parseDocument(src.text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, strict: true });
  const errors: SvcError[] = [];
  for (const e of doc.errors) {
    const at = lines.linePos(e.pos[0]);
    const dup = e.code === 'DUPLICATE_KEY';
    errors.push(
      svcError(dup ? 'duplicate_name' : 'yaml_syntax', dup ? 'a key is declared twice in one map' : firstLine(e.message), {
        span: { file: src.file, line: at.line, col: at.col },
        hint: dup ? 'keep one of the two declarations' : 'fix the YAML syntax at this position',
      }),
    );
  }
  if (errors.length) return { errors };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown;
  } catch {
    return { errors: [svcError('yaml_syntax', `the file expands YAML aliases more than ${MAX_ALIAS_COUNT} times`, { span: { file: src.file, line: 1, col: 1 }, hint: 'write the repeated parts out instead of using many *aliases' })] };
  }
  if (data === null || data === undefined) return { source: { file: src.file, doc, lines, data: {} }, errors };
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { errors: [svcError('schema_violation', 'a catalog source file must be a map of sections', { span: { file: src.file, line: 1, col: 1 }, hint: 'start the file with `catalog:`, `entities:`, `capabilities:` or `mappings:`' })] };
  }
  return { source: { file: src.file, doc, lines, data: data as Record<string, unknown> }, errors };
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}

/** Validate one parsed file against the authoring schema; problems carry file:line:col. */
export function schemaDiagnostics(src: SourceFile): { errors: SvcError[]; paths: KeyPath[] } {
  const problems = schemaProblems(validateSourceFile(src.data));
  return {
    errors: problems.map((p) => svcError('schema_violation', p.message, { span: locate(src, p.path, p.atKey), hint: p.hint ?? 'see schemas/catalog-source.schema.json for the allowed form' })),
    paths: problems.map((p) => p.path),
  };
}

/**
 * The position of the node at `path` (or of its key when `atKey`). Falls back to the nearest
 * existing ancestor, so a span is always valid.
 */
export function locate(src: SourceFile, path: KeyPath, atKey = false): Span {
  let node: Node | null | undefined = src.doc.contents as Node | null;
  let keyNode: Node | undefined;
  let best: Node | undefined = node ?? undefined;
  for (const seg of path) {
    keyNode = undefined;
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) break;
      keyNode = pair.key as Node;
      node = pair.value as Node | null;
      best = (node ?? keyNode) as Node;
    } else if (isSeq(node) && typeof seg === 'number' && node.items[seg]) {
      node = node.items[seg] as Node;
      best = node;
    } else {
      break;
    }
  }
  const target = atKey && keyNode ? keyNode : best;
  const offset = target?.range?.[0] ?? 0;
  const pos = src.lines.linePos(offset);
  return { file: src.file, line: pos.line, col: pos.col };
}
