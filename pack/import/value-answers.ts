/**
 * Value answers: a GET whose success answer declares no row shape (text, XML, YAML, CSV, HTML; a
 * JSON map, scalar, list of scalars or free-form object; JSON or `*\/*` without a schema; no
 * content at all; only a `default` response) is a singleton get whose one row holds the answer
 * whole (the mapping's `response.value`, docs/authoring.md "Value answers"). svc invents no rows:
 * a text answer is entity `Text` (field `text: string`), any other `Value` (field `value`, type
 * `object` with no fields: any JSON value). A read answering only files (images, PDF, archives,
 * pack/media-types.ts) is no value: it is skipped as `file_answer`.
 */
import { isFileType, mediaType as media } from '../media-types.js';
import type { EntityTable } from './entities.js';
import type { ImportEntity, ImportType } from './model.js';
import { JSON_TYPE, type Operation } from './operations.js';

/** How a read's answer is one value: its kind, and the `Accept` the mapping sends (if any). */
export type ValueAnswer = ValueRead | { files: string[] };
export interface ValueRead {
  kind: 'text' | 'value';
  accept?: string;
}

/**
 * The value answer of a GET that reads no rows: `value` when the document declares JSON (with a
 * schema that is no row, or none), `*\/*`, no content or only a `default` response; else `text`
 * when a declared type is not a file's; else the file types. A text read asks for its first text
 * type; a value read for the JSON type the document declares instead of `application/json`, else
 * for the one type it declares besides `*\/*`, unless that is `application/json` (which svc asks
 * for anyway).
 */
export function valueAnswer(op: Operation): ValueAnswer {
  const types = op.response.types;
  if (op.response.schema || types.length === 0 || types.some((t) => JSON_TYPE.test(t))) {
    const named = types.filter((t) => media(t) !== '*/*');
    // The JSON type the document declares instead of application/json (operations.ts), or its one type.
    const json =
      op.response.accept !== undefined && media(op.response.accept) !== '*/*' ? op.response.accept : undefined;
    const one = json ?? (named.length === 1 ? named[0] : undefined);
    return { kind: 'value', ...(one && media(one) !== 'application/json' ? { accept: one } : {}) };
  }
  const text = types.find((t) => !isFileType(t));
  return text ? { kind: 'text', accept: text } : { files: types };
}

const ENTITIES: Record<'text' | 'value', { name: string; type: ImportType; description: string }> = {
  text: {
    name: 'Text',
    type: { type: 'string' },
    description: 'An answer the document declares as text: the text whole.',
  },
  value: {
    name: 'Value',
    type: { type: 'object' },
    description: 'An answer the document declares no fields for: the JSON value whole.',
  },
};

/** The entity of value answers of `kind` (made on first use), and its field. */
export function valueEntity(table: EntityTable, kind: 'text' | 'value'): { entity: ImportEntity; field: string } {
  const e = ENTITIES[kind];
  return { entity: table.valueEntity(e.name, kind, e.type, e.description), field: kind };
}
