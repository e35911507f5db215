/**
 * Request templates of HTTP mappings. `"{city}"` takes the parameter's typed value, `"/beers/{id}"`
 * interpolates it, `{{`/`}}` are literal braces, anything else is a constant.
 */

export type TemplatePart = { text: string } | { param: string };

export interface ParsedTemplate {
  parts: TemplatePart[];
  /** Set when the whole template is exactly one `{param}`: the value keeps its JSON type. */
  whole?: string;
  /** Names referenced, in order of first appearance. */
  params: string[];
  /** Set when braces are unbalanced or a reference is empty. */
  error?: string;
}

const cache = new Map<string, ParsedTemplate>();

/** Parse a template (memoized: templates are few and reused on every request). */
export function parseTemplate(template: string): ParsedTemplate {
  let parsed = cache.get(template);
  if (!parsed) {
    parsed = parseUncached(template);
    if (cache.size < 10_000) cache.set(template, parsed);
  }
  return parsed;
}

function parseUncached(t: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  const params: string[] = [];
  let text = '';
  let i = 0;
  while (i < t.length) {
    const c = t[i]!;
    if (c === '{' && t[i + 1] === '{') {
      text += '{';
      i += 2;
      continue;
    }
    if (c === '}' && t[i + 1] === '}') {
      text += '}';
      i += 2;
      continue;
    }
    if (c === '}') return { parts, params, error: `unmatched \`}\` at offset ${i} (write \`}}\` for a literal brace)` };
    if (c === '{') {
      const end = t.indexOf('}', i + 1);
      if (end < 0) return { parts, params, error: `unclosed \`{\` at offset ${i}` };
      const name = t.slice(i + 1, end).trim();
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
        return { parts, params, error: `\`{${name}}\` is not a parameter reference` };
      if (text) {
        parts.push({ text });
        text = '';
      }
      parts.push({ param: name });
      if (!params.includes(name)) params.push(name);
      i = end + 1;
      continue;
    }
    text += c;
    i++;
  }
  if (text) parts.push({ text });
  const only = parts.length === 1 ? parts[0]! : undefined;
  const out: ParsedTemplate = { parts, params };
  if (only && 'param' in only) out.whole = only.param;
  return out;
}

/** Every parameter referenced by a JSON body template (strings at any depth). */
export function jsonTemplateParams(body: unknown, out: string[] = []): string[] {
  if (typeof body === 'string') {
    for (const p of parseTemplate(body).params) if (!out.includes(p)) out.push(p);
  } else if (Array.isArray(body)) {
    for (const v of body) jsonTemplateParams(v, out);
  } else if (body !== null && typeof body === 'object') {
    for (const v of Object.values(body)) jsonTemplateParams(v, out);
  }
  return out;
}

/**
 * Whether `param` is interpolated into the URL path template `path` (`/makers/{id}`). A value
 * bound from a row that is an object or a list is never put there (compiler/resolve-arg.ts at
 * compile time, runtime/check-values.ts at run time): it would be its whole JSON, often kilobytes.
 */
export function inPathTemplate(path: string, param: string): boolean {
  return parseTemplate(path).params.includes(param);
}
