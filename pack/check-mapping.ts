/**
 * Checks of a capability's HTTP mapping: path, query, header and body templates refer to
 * declared parameters, every parameter is sent somewhere, a form or multipart body is a map of
 * fields, and pagination is complete and consistent with the rows returned and the mapped query keys.
 */
import { suggestHint } from '../common/suggest.js';
import type { Capability } from './cgs.js';
import type { Fail } from './check-context.js';
import { jsonTemplateParams, parseTemplate } from './template.js';

/** Reports problems of the mapping of `c`; `droppedParam` names parameters dropped by schema errors. */
export function checkMapping(c: Capability, at: string, droppedParam: (n: string) => boolean, fail: Fail): void {
  const h = c.http;
  const hat = `${at}/http`;
  const declared = new Map(c.params.map((p) => [p.name, p]));
  const names = [...declared.keys()];
  const path = parseTemplate(h.path);
  if (path.error)
    fail(`${hat}/path`, 'bad_mapping', `path template of \`${c.name}\`: ${path.error}`, 'write parameters as `{name}`');
  for (const v of path.params) {
    const p = declared.get(v);
    if (!p && !droppedParam(v))
      fail(
        `${hat}/path`,
        'path_parameter_undeclared',
        `path variable \`{${v}}\` of \`${c.name}\` is not a declared parameter`,
        `declare \`${v}\` under \`capabilities.${c.name}.params\` (${suggestHint(v, names)})`,
      );
    else if (p && !p.required)
      fail(
        `${hat}/path`,
        'path_parameter_optional',
        `path variable \`{${v}}\` of \`${c.name}\` is an optional parameter`,
        'path parameters are always sent: remove `required: false`',
      );
    if (p?.many)
      fail(
        `${at}/params/${c.params.indexOf(p)}/many`,
        'bad_mapping',
        `path variable \`{${v}}\` of \`${c.name}\` is a \`many\` parameter, but a path takes one value`,
        `remove \`many: true\` from \`${v}\`, or send it in the query (\`${v}: "{${v}}"\` under query:), where a list is repeated keys`,
      );
  }
  const used = new Set(path.params);
  const templates: Array<[string, string]> = [
    ...Object.values(h.query).map((t): [string, string] => [`${hat}/query`, t]),
    ...Object.values(h.headers).map((t): [string, string] => [`${hat}/headers`, t]),
  ];
  for (const [where, t] of templates) {
    const parsed = parseTemplate(t);
    if (parsed.error)
      fail(
        where,
        'bad_mapping',
        `template \`${t}\` of \`${c.name}\`: ${parsed.error}`,
        'write parameters as `{name}` and literal braces as `{{` `}}`',
      );
    for (const v of parsed.params) {
      used.add(v);
      if (!declared.has(v) && !droppedParam(v))
        fail(
          where,
          'unknown_parameter',
          `template \`${t}\` of \`${c.name}\` refers to undeclared parameter \`${v}\``,
          suggestHint(v, names),
        );
    }
  }
  for (const v of h.body !== undefined ? jsonTemplateParams(h.body) : []) {
    used.add(v);
    if (!declared.has(v) && !droppedParam(v))
      fail(
        `${hat}/body`,
        'unknown_parameter',
        `body of \`${c.name}\` refers to undeclared parameter \`${v}\``,
        suggestHint(v, names),
      );
  }
  const enc = h.body_encoding;
  if (enc && h.body !== undefined && (h.body === null || typeof h.body !== 'object' || Array.isArray(h.body)))
    fail(
      `${hat}/body`,
      'bad_mapping',
      `body of \`${c.name}\` is sent as ${enc} fields, but its template is not an object`,
      'a form or multipart body is named fields: write `body:` as a map of field name to template',
    );
  for (const p of c.params) {
    if (!used.has(p.name))
      fail(
        `${hat}`,
        'unmapped_parameter',
        `parameter \`${p.name}\` of \`${c.name}\` is sent nowhere`,
        `add \`${p.name}: "{${p.name}}"\` to the mapping's query or body, or leave query/body out to place parameters automatically`,
      );
  }
  const pg = h.pagination;
  if (pg) {
    if (c.returns !== 'rows')
      fail(
        `${hat}/pagination`,
        'bad_mapping',
        `\`${c.name}\` returns ${c.returns} but declares pagination`,
        'only capabilities that return rows are paginated',
      );
    const need: Record<string, string[]> = {
      page: ['page_param'],
      offset: ['offset_param', 'size_param'],
      cursor: ['cursor_param'],
      link: [],
    };
    for (const k of need[pg.style] ?? []) {
      if ((pg as unknown as Record<string, unknown>)[k] === undefined)
        fail(
          `${hat}/pagination`,
          'bad_mapping',
          `${pg.style} pagination of \`${c.name}\` needs \`${k}\``,
          `add \`${k}:\` (the vendor's query parameter name) to pagination`,
        );
    }
    if (pg.style === 'cursor' && (pg.next_cursor === undefined) === (pg.cursor_field === undefined))
      fail(
        `${hat}/pagination`,
        'bad_mapping',
        `cursor pagination of \`${c.name}\` needs ${pg.next_cursor === undefined ? 'one of' : 'only one of'} \`next_cursor\` and \`cursor_field\``,
        'next_cursor: the dot path of the next cursor in the answer; cursor_field: the field of the last row that is the cursor (`id` for `starting_after`)',
      );
    if (pg.max_page_size < pg.page_size)
      fail(
        `${hat}/pagination`,
        'bad_mapping',
        `page_size ${pg.page_size} of \`${c.name}\` exceeds max_page_size ${pg.max_page_size}`,
        'lower page_size or raise max_page_size',
      );
    const own = ['page_param', 'offset_param', 'cursor_param', 'size_param']
      .map((k) => (pg as unknown as Record<string, string | undefined>)[k])
      .filter((x): x is string => !!x);
    for (const q of own)
      if (q in h.query)
        fail(
          `${hat}/pagination`,
          'bad_mapping',
          `\`${q}\` of \`${c.name}\` is both a pagination parameter and a mapped query key`,
          'let pagination own its query parameters',
        );
  }
}
