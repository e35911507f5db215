/**
 * The value of one argument: a reference to a bound row's field (`x.id`), checked against the
 * binding, or a literal type-checked against the parameter.
 */
import { quote } from '../common/quote.js';
import { suggestHint } from '../common/suggest.js';
import type { Capability } from '../pack/cgs.js';
import type { Arg } from './ast.js';
import type { PlanArg } from './plan.js';
import { listOf, type ResolveState } from './resolve-state.js';
import { checkLiteral, describeType, exampleLiteral } from './values.js';

/** The plan argument for `a` given to `param` of `cap`, or undefined after recording a diagnostic. */
export function resolveArg(st: ResolveState, cap: Capability, param: string, a: Arg): PlanArg | undefined {
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
        `bind it first (${name} = e1(...)), or write a literal such as ${param}=${exampleLiteral(p)}${/^[A-Za-z]/.test(v.binding.text) ? ` (a string needs quotes: "${name}")` : ''}`,
      );
    }
    const field = v.field?.text ?? b.entity.id_field;
    if (!b.entity.fields.some((f) => f.name === field))
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
    return { ref: { step: b.step.id, field } };
  }
  const c = checkLiteral(param, p, v, !p.required);
  if (!c.ok) return st.fail(c.code, c.at.span, c.message, c.hint);
  return { lit: c.value };
}
