/**
 * `import-report.md`: what became what (entities and their source schemas, capabilities and their
 * operations, relations), the environment variables of the auth block, what was skipped and why,
 * and what a person should review. Deterministic like the YAML.
 */
import { authEnv, authSent } from './auth.js';
import { CONSTRAINT_KEYS } from '../cgs.js';
import {
  SKIP_REASONS,
  type ImportCapability,
  type ImportCatalog,
  type ImportLog,
  type ImportPagination,
  type SkipReason,
} from './model.js';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export interface ReportInput {
  catalog: ImportCatalog;
  log: ImportLog;
  title: string;
  openapi: string;
  operations: number;
}

export function renderReport({ catalog: c, log, title, openapi, operations }: ReportInput): string {
  const out: string[] = [];
  const rel = c.entities.reduce((n, e) => n + e.relations.length, 0);
  out.push(`# Import report: ${cell(title)}`, '');
  out.push(
    `Source: OpenAPI ${openapi}, ${operations} operations. Catalog \`${c.entry_id}\`: ${c.entities.length} entities, ` +
      `${c.capabilities.length} capabilities, ${rel} relations; ${log.skipped.length} items skipped.`,
    '',
  );
  out.push('## Auth', '');
  const env = authEnv(c.auth);
  const sent = authSent(c.auth);
  out.push(
    `Scheme \`${c.auth.scheme}\`.${sent ? ` Every call sends ${sent}.` : ''}` +
      `${env.length ? ` Set these environment variables where svc runs: ${env.map((e) => `\`${e}\``).join(', ')}.` : ''}`,
    '',
  );
  out.push(
    `Backend: \`${c.base_url}\` (override per deployment with \`--backend\` or \`SVC_BACKEND_URL_<ENTRY_ID>\`).`,
    '',
  );
  out.push('## Entities', '', '| entity | id field | fields | relations | from |', '|---|---|---|---|---|');
  for (const e of c.entities)
    out.push(
      `| ${e.name} | ${e.id || '-'} | ${e.fields.size} | ${e.relations.map((r) => `${r.name} -> ${r.target}`).join(', ') || '-'} | ${cell(e.source)} |`,
    );
  out.push(
    '',
    '## Capabilities',
    '',
    '| capability | kind | entity | operation | meaning from |',
    '|---|---|---|---|---|',
  );
  for (const k of c.capabilities)
    out.push(
      `| ${k.name} | ${k.kind}${k.singleton ? ' (singleton)' : ''}${k.pagination ? ` (${cell(pagingText(k.pagination))})` : ''} | ${k.entity} | \`${cell(k.origin)}\` | ${meaningCell(k)} |`,
    );
  out.push('', ...envelopeSection(c));
  out.push('', ...valueSection(c));
  out.push('', ...parameterSection(c));
  out.push('', '## Skipped', '');
  if (log.skipped.length === 0) out.push('Nothing.');
  else {
    out.push('| what | reason | why |', '|---|---|---|');
    for (const s of log.skipped) out.push(`| \`${cell(s.what)}\` | \`${s.reason}\` | ${cell(s.why)} |`);
    const counts = new Map<SkipReason, number>();
    for (const s of log.skipped) counts.set(s.reason, (counts.get(s.reason) ?? 0) + 1);
    out.push('', 'Reasons (the closed list of docs/import.md):', '');
    for (const [r, n] of counts) out.push(`- \`${r}\` (${n}): ${SKIP_REASONS[r]}`);
  }
  out.push('', '## Review', '');
  out.push(
    '- Capability kinds: every create, update, delete and action needs review before it runs; check that each read-only operation became a query or get and nothing else.',
    '- Descriptions are cut to one line from the document: they are what agents read.',
    '- Entity ids come from the path parameter of each get; relations from nested paths and `<entity>Id` fields.',
  );
  for (const r of log.review) out.push(`- ${cell(r.what)}: ${cell(r.note)}`);
  out.push('');
  return out.join('\n');
}

/** Where a capability's meaning came from; `-` when it only restated the kind and entity (economy.ts). */
/**
 * The paging convention in words: `cursor paging: token \`nextPageToken\` sent back as \`pageToken\``,
 * `cursor paging: after the last row's \`id\` in \`starting_after\`, while \`has_more\``,
 * `link paging: next URL at \`links.next\``, `page paging: \`page\` from 1, not sent for the first page`.
 */
export function pagingText(pg: ImportPagination): string {
  const parts: string[] = [];
  if (pg.style === 'cursor' && pg.cursor_field !== undefined)
    parts.push(`after the last row's \`${pg.cursor_field}\` in \`${pg.cursor_param}\``);
  else if (pg.style === 'cursor') parts.push(`token \`${pg.next_cursor}\` sent back as \`${pg.cursor_param}\``);
  else if (pg.style === 'link')
    parts.push(pg.next_url !== undefined ? `next URL at \`${pg.next_url}\`` : 'Link header');
  if (pg.page_param !== undefined) parts.push(`\`${pg.page_param}\` from ${pg.first_page ?? 1}`);
  if (pg.omit_first_page) parts.push('not sent for the first page');
  if (pg.offset_param !== undefined) parts.push(`\`${pg.offset_param}\``);
  if (pg.size_param !== undefined) parts.push(`size \`${pg.size_param}\``);
  if (pg.has_more !== undefined) parts.push(`while \`${pg.has_more}\``);
  return `${pg.style} paging: ${parts.join(', ')}`;
}

function meaningCell(k: ImportCapability): string {
  return k.description ? k.meaning_from : '- (restated the kind and entity)';
}

/**
 * `## Envelopes`: each capability whose answer wraps its rows or row (the mapping's
 * `response.path`, with a total found in the wrapper) or whose request body wraps its parameters.
 */
function envelopeSection(c: ImportCatalog): string[] {
  const out = ['## Envelopes', ''];
  const rows = c.capabilities.flatMap((k) => {
    const total = k.response.total && 'path' in k.response.total ? k.response.total.path : undefined;
    if (!k.response.path && !total && !k.body_wrapper) return [];
    const what = k.returns === 'rows' ? 'rows' : 'row';
    const answer =
      k.returns === 'none'
        ? 'nothing read'
        : k.response.path
          ? `${what} under \`${k.response.path}\``
          : `${what}: the answer itself`;
    return [
      `| ${k.name} | ${answer} | ${total ? `\`${total}\`` : '-'} | ${k.body_wrapper ? `parameters sent under \`${k.body_wrapper}\`` : '-'} |`,
    ];
  });
  if (rows.length === 0)
    return [...out, 'None: every answer is its rows or its row, every request body its parameters.'];
  out.push(
    "Answers read inside a wrapper (the mapping's `response.path`) and request bodies sent wrapped (its `body` template); the parameters are the wrapped object's properties:",
    '',
    '| capability | answer | total | request body |',
    '|---|---|---|---|',
    ...rows,
  );
  return out;
}

/**
 * `## Value answers`: each read whose answer declares no row shape, read as one value whole (the
 * mapping's `response.value`): as text (entity field of type string) or as a JSON value, and the
 * `Accept` its mapping sends.
 */
function valueSection(c: ImportCatalog): string[] {
  const out = ['## Value answers', ''];
  const rows = c.capabilities.flatMap((k) => {
    const field = k.response.value;
    if (field === undefined) return [];
    const entity = c.entities.find((e) => e.name === k.entity);
    const text = entity?.fields.get(field)?.type === 'string';
    const accept = k.constants?.headers?.Accept;
    return [
      `| ${k.name} | ${text ? 'text' : 'JSON value (text if the vendor answers text)'} | \`${k.entity}.${field}\` | ${accept ? `\`${cell(accept)}\`` : '-'} | \`${cell(k.origin)}\` |`,
    ];
  });
  if (rows.length === 0) return [...out, 'None: every read answers rows or a row.'];
  out.push(
    'Reads whose answer declares no row shape (text, XML, CSV, a JSON map, scalar or list, no schema): one row holding the answer whole, read with `m#()` (a singleton get). Files are not read (`file_answer` under Skipped).',
    '',
    '| capability | read as | field | Accept | operation |',
    '|---|---|---|---|---|',
    ...rows,
  );
  return out;
}

/**
 * How request bodies are sent: how many as JSON, and which capabilities send a form or multipart
 * body (their objects and lists as bracketed fields, which a person should check against the vendor).
 */
function bodyLine(c: ImportCatalog): string[] {
  const by = { json: [] as string[], form: [] as string[], multipart: [] as string[] };
  for (const k of c.capabilities) {
    if (k.body_encoding) by[k.body_encoding].push(`\`${k.name}\``);
    else if (k.params.some((p) => p.in === 'body')) by.json.push(k.name);
  }
  const encoded = [
    ...(by.form.length
      ? [`form (\`body_encoding: form\`, application/x-www-form-urlencoded): ${by.form.join(', ')}`]
      : []),
    ...(by.multipart.length
      ? [`multipart (\`body_encoding: multipart\`, multipart/form-data text fields): ${by.multipart.join(', ')}`]
      : []),
  ];
  const line = `Request bodies: ${by.json.length} JSON${encoded.length ? `; ${encoded.join('; ')}` : ''}.`;
  const shapes = bodyShapeLines(c);
  if (!encoded.length) return [line, ...shapes];
  return [
    `${line} Their object and list parameters are sent as bracketed fields (\`a[b]=1\`, \`a[]=1\`, \`a[0][b]=1\`): check the vendor reads them so. File parts are listed under Skipped.`,
    ...shapes,
  ];
}

/**
 * Bodies taught by the members of their nested objects (sent nested by the `body` template), and
 * required bodies sent as `{}` (in their wrapper) when a program passes none of their parameters.
 */
function bodyShapeLines(c: ImportCatalog): string[] {
  const nested = c.capabilities.flatMap((k) => {
    const ps = k.params.filter((p) => p.at);
    return ps.length
      ? [`\`${k.name}\` (${ps.map((p) => `${[...p.at!, p.wire].join('.')} as ${p.name}`).join(', ')})`]
      : [];
  });
  const required = c.capabilities.filter((k) => k.body_required).map((k) => `\`${k.name}\``);
  return [
    ...(nested.length
      ? ['', `Members of nested body objects, taught as parameters and sent nested: ${nested.join('; ')}.`]
      : []),
    ...(required.length
      ? [
          '',
          `Required bodies sent as \`{}\` (a wrapped one as its wrapper's empty object) when a program passes none of their parameters (\`body_required\`): ${required.join(', ')}.`,
        ]
      : []),
  ];
}

/**
 * The values each mapping always sends (a query its path key fixes, a required parameter of one
 * value), and the fragments of path keys, which are never sent.
 */
function constantLines(c: ImportCatalog): string[] {
  const sent = c.capabilities.flatMap((k) => [
    ...Object.entries(k.constants?.query ?? {}).map(([n, v]) => `\`${k.name}\` query \`${n}=${v}\``),
    ...Object.entries(k.constants?.headers ?? {}).map(([n, v]) => `\`${k.name}\` header \`${n}: ${v}\``),
  ]);
  const cut = c.capabilities.filter((k) => /^[A-Z]+ [^ ]*#/.test(k.origin)).map((k) => `\`${k.name}\``);
  const out: string[] = [];
  if (sent.length)
    out.push(
      `Constants (sent on every call, not parameters: a query the path key fixes, a required parameter of one value): ${sent.join(', ')}.`,
      '',
    );
  if (cut.length)
    out.push(`Path fragments (\`#...\`, never sent; the mapping's path is the path alone): ${cut.join(', ')}.`, '');
  return out;
}

/**
 * `## Parameters`: the constraints and lists carried over (counts), the lists sent comma-joined,
 * how request bodies are encoded, and each keyword of the document the catalog cannot say (the vendor still checks it).
 */
function parameterSection(c: ImportCatalog): string[] {
  const out = ['## Parameters', ''];
  const counts = new Map<string, number>(CONSTRAINT_KEYS.map((k) => [k, 0]));
  let repeat = 0;
  const comma: string[] = [];
  const left: string[] = [];
  for (const k of c.capabilities)
    for (const p of k.params) {
      for (const key of CONSTRAINT_KEYS) if (p.constraints?.[key] !== undefined) counts.set(key, counts.get(key)! + 1);
      if (p.many && k.array_style === 'comma') comma.push(`\`${k.name}.${p.name}\``);
      else if (p.many) repeat++;
      for (const l of p.left ?? []) left.push(`| ${k.name} | ${p.name} | ${cell(l)} |`);
    }
  const carried = [...counts].filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`);
  out.push(
    `Constraints carried over: ${carried.join(', ') || 'none'}. Lists (\`many\`, one value or a list): ` +
      `${repeat} sent as repeated keys (\`?k=a&k=b\`), ${comma.length} comma-joined (\`?k=a,b\`, the mapping's \`array_style: comma\`)` +
      `${comma.length ? `: ${comma.join(', ')}` : ''}.`,
    '',
  );
  out.push(...bodyLine(c), '', ...constantLines(c));
  if (left.length === 0) return [...out, 'Every constraint of the document was carried over.'];
  out.push(
    'Not carried over (the catalog cannot say it; the vendor still checks it):',
    '',
    '| capability | parameter | left out |',
    '|---|---|---|',
    ...left,
  );
  return out;
}
