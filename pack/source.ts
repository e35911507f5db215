/**
 * Catalog source files: YAML parsed once, with positions, so that every diagnostic can name the
 * file, line and column. Pure: callers hand in file names and texts (see `read-source.ts` for the I/O).
 */
import { isMap, isNode, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';
import type { Span, SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import { validateSourceFile } from './ajv.js';
import { parseYaml } from './parse-yaml.js';
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

/** Parse one YAML file (the dialect: `parse-yaml.ts`). Problems come back as diagnostics. */
export function parseSource(src: SourceText): { source?: SourceFile; errors: SvcError[] } {
  const { doc, lines, data, errors } = parseYaml(src.text, src.file);
  if (errors.length) return { errors };
  if (data === null || data === undefined) return { source: { file: src.file, doc, lines, data: {} }, errors };
  if (!isRecord(data)) {
    return {
      errors: [
        svcError('schema_violation', 'a catalog source file must be a map of sections', {
          span: { file: src.file, line: 1, col: 1 },
          hint: 'start the file with `catalog:`, `entities:`, `capabilities:` or `mappings:`',
        }),
      ],
    };
  }
  return { source: { file: src.file, doc, lines, data }, errors };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validate one parsed file against the authoring schema; problems carry file:line:col. */
export function schemaDiagnostics(src: SourceFile): { errors: SvcError[]; paths: KeyPath[] } {
  const problems = schemaProblems(validateSourceFile(src.data));
  return {
    errors: problems.map((p) =>
      svcError('schema_violation', p.message, {
        span: locate(src, p.path, p.atKey),
        hint: p.hint ?? 'see schemas/catalog-source.schema.json for the allowed form',
      }),
    ),
    paths: problems.map((p) => p.path),
  };
}

/**
 * The position of the node at `path` (or of its key when `atKey`). Falls back to the nearest
 * existing ancestor, so a span is always valid.
 */
export function locate(src: SourceFile, path: KeyPath, atKey = false): Span {
  let node: unknown = src.doc.contents;
  let keyNode: Node | undefined;
  let best: Node | undefined = isNode(node) ? node : undefined;
  for (const seg of path) {
    keyNode = undefined;
    const child = isMap(node)
      ? node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg))
      : undefined;
    if (child) {
      keyNode = isNode(child.key) ? child.key : undefined;
      node = child.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
    } else {
      break;
    }
    if (isNode(node)) best = node;
    else if (keyNode) best = keyNode;
    else break;
  }
  const target = atKey && keyNode ? keyNode : best;
  const pos = src.lines.linePos(target?.range?.[0] ?? 0);
  return { file: src.file, line: pos.line, col: pos.col };
}
