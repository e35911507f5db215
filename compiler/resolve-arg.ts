/**
 * The value of one argument: a reference to a bound row's field (`x.id`), checked against the
 * binding, or a literal type-checked against the parameter.
 */
import { quote } from '../common/quote.js';
import { suggestHint } from '../common/suggest.js';
import type { Capability, ParamDef } from '../pack/cgs.js';
import { headerValueProblem } from '../pack/header-values.js';
import type { Arg, Call, SrcSpan, Value } from './ast.js';
import { checkParamLiteral } from './check-param.js';
import { objectIntoPath, scalarFields } from './path-value.js';
import { showable } from './fix-text.js';
import type { PlanArg } from './plan.js';
import { listOf, type ResolveState } from './resolve-state.js';
import { entityHead } from './member-hint.js';
import { describeType, exampleId, exampleLiteral, type Checked } from './values.js';

/**
 * The plan argument for `a` given to `param` of `cap`, or undefined after recording a diagnostic.
 * `positionalOf` names the call when `a` was written without a name (`e2(7)`), so hints show that form;
 * `call`, when given, is the call `a` was written in (a broken constraint's hint shows it fixed).
 */
export function resolveArg(
  st: ResolveState,
  cap: Capability,
  param: string,
  a: Arg,
  positionalOf?: string,
  call?: Call,
): PlanArg | undefined {
  const p = cap.params.find((x) => x.name === param)!;
  const v = a.value;
  if (v.kind === 'ref') {
    const b = st.bindings.get(v.binding.text);
    if (!b) {
      const name = quote(v.binding.text);
      if (!v.field && st.opts.symbols?.lookup(v.binding.text))
        return st.fail(
          'wrong_type',
          v.span,
          `\`${name}\` is a symbol, not a value`,
          `\`${param}\` takes ${describeType(p)}; write for example ${param}=${exampleLiteral(p)}`,
        );
      return st.fail(
        'unknown_binding',
        v.binding.span,
        `\`${name}\` is not bound by an earlier line`,
        unboundHint(st, cap, p, v.binding.text, !!v.field),
      );
    }
    const field = v.field?.text ?? b.entity.id_field;
    const def = b.entity.fields.find((f) => f.name === field);
    if (!def)
      return st.fail(
        'projection_unknown_field',
        v.field?.span ?? v.span,
        `${b.api}:${b.entity.name} has no field \`${quote(field)}\``,
        st.suggest(() =>
          suggestHint(
            field,
            b.entity.fields.map((f) => f.name),
            listOf('fields'),
          ),
        ),
      );
    if (b.card === 'none')
      return st.fail(
        'write_in_read_position',
        v.span,
        `\`${quote(v.binding.text)}\` holds no rows`,
        'bind a read or a write that returns a row',
      );
    const intoPath = objectIntoPath(cap, param, def, `${quote(v.binding.text)}.${field}`);
    if (intoPath)
      return st.fail(
        'wrong_type',
        v.span,
        intoPath,
        `pass a field of ${b.entity.name} that holds the ${param} itself (a string or a number): ${scalarFields(b.entity.fields)}`,
      );
    return { ref: { step: b.step.id, field } };
  }
  const c = checkParamLiteral(p, v, !p.required);
  if (!c.ok) return st.fail(c.code, c.at.span, c.message, literalHint(st, p, v, c, positionalOf, call));
  // A value sent in a header: a line break in it is refused here, so a dry-run catches it too.
  const header = c.value === null ? undefined : headerValueProblem(cap, param, c.value);
  if (header) return st.fail(header.code, v.span, header.message, header.hint);
  return { lit: c.value };
}

/**
 * The hint of a refused literal: the positional call fixed (`e2(7)`); for an item of a list, the
 * whole list fixed; for a broken constraint, the call with the valid value (`m7(..., rating=5)`).
 */
function literalHint(
  st: ResolveState,
  p: ParamDef,
  v: Value,
  c: Extract<Checked, { ok: false }>,
  positionalOf: string | undefined,
  call: Call | undefined,
): string {
  const text = st.lines.text;
  const fix = c.fix !== undefined && c.at !== v ? spliced(text, v.span, c.at.span, c.fix) : c.fix;
  if (positionalOf) return `write ${positionalOf}(${fix ?? exampleId(p)})`;
  if (c.code === 'constraint_violation' && fix !== undefined && call) {
    const line = text.slice(text.lastIndexOf('\n', call.span.start - 1) + 1, call.span.start);
    const whole = line + spliced(text, call.span, v.span, fix);
    if (showable(whole)) return `write ${whole.trim()}`;
  }
  if (c.code !== 'enum_value_not_allowed' && fix !== undefined && c.at !== v) return `write ${p.name}=${fix}`;
  return c.hint;
}

/** The text of `outer` with `inner` (a span inside it) replaced by `by`. */
function spliced(text: string, outer: SrcSpan, inner: SrcSpan, by: string): string {
  return text.slice(outer.start, inner.start) + by + text.slice(inner.end, outer.end);
}

/** Types whose values are written in quotes: a bare word given to them is most likely a string. */
const QUOTED = new Set(['string', 'date', 'datetime', 'ref']);

/** `city=Berlin`: the quoted literal first; else bind the name first, with the entity its reference points to. */
function unboundHint(st: ResolveState, cap: Capability, p: ParamDef, word: string, field: boolean): string {
  const name = quote(word);
  const api = st.opts.registry.list().find((e) => st.opts.registry.capability(e.entry_id, cap.name) === cap)?.entry_id;
  const bindTo = p.type === 'ref' && api ? entityHead(st, { api, entity: { name: p.entity } }) : 'e1';
  const stringy = QUOTED.has(p.type) || (p.type === 'enum' && p.values.some((x) => typeof x === 'string'));
  if (!field && stringy && /^[A-Za-z]/.test(word))
    return `a string needs double quotes: ${p.name}="${name}"; or bind ${name} on an earlier line (${name} = ${bindTo}(...))`;
  return `bind it first (${name} = ${bindTo}(...)), or write a literal such as ${p.name}=${exampleLiteral(p)}${/^[A-Za-z]/.test(word) ? ` (a string needs quotes: "${name}")` : ''}`;
}
