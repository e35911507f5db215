/**
 * Teachability: every capability of a catalog must be reachable by a generated example program
 * that compiles to a plan using that very capability, and a list that sorts must compile with
 * `sort=`/`order=` to a plan that sorts. Packing and loading run this check (the CLI and server
 * pass it to `pack` as an extra check, keeping `pack/` free of compiler imports).
 */
import { svcError } from '../common/errors.js';
import type { Capability, Cgs } from '../pack/cgs.js';
import type { Located } from '../pack/check.js';
import { Registry } from '../pack/registry.js';
import { compileProgram } from './compile.js';
import { exampleSortField } from './resolve-sort.js';
import { SymbolTable } from './symbols.js';
import { exampleProgram } from './teaching.js';
import { exampleLiteral } from './values.js';

export function teachabilityCheck(cgs: Cgs): Located[] {
  const registry = new Registry([
    {
      entry_id: cgs.entry_id,
      label: cgs.label,
      tags: cgs.tags,
      version: cgs.version,
      cgs,
      cgs_hash: '0'.repeat(64),
      base_url: cgs.backend.base_url,
      artifact: '',
    },
  ]);
  const symbols = new SymbolTable();
  symbols.expose(
    registry,
    cgs.entities.map((e) => ({ api: cgs.entry_id, entity: e.name })),
  );
  const out: Located[] = [];
  cgs.capabilities.forEach((cap, i) => {
    const at = `/capabilities/${i}`;
    const program = teachableExample(cgs.entry_id, cap, registry, symbols);
    if (program === undefined) {
      out.push({
        at,
        error: svcError('not_teachable', `capability \`${cap.name}\` cannot be written in a program`, {
          hint: `its entity ${cap.entity} must exist and the capability needs a symbol`,
        }),
      });
      return;
    }
    const r = compileProgram(program, { registry, symbols });
    if (r.kind === 'error') {
      const d = r.diagnostics[0]!;
      out.push({
        at,
        error: svcError(
          'not_teachable',
          `the example \`${program}\` for \`${cap.name}\` does not compile: ${d.code}: ${d.message}`,
          {
            hint: 'rename parameters that clash with the language (limit, p1, s0), or give the capability a distinct parameter',
          },
        ),
      });
    } else if (r.kind === 'plan') {
      const last = r.plan.steps[r.plan.steps.length - 1]!;
      const sorting =
        last.capability === cap.name ? sortingProblem(cgs.entry_id, program, cap, registry, symbols) : undefined;
      if (sorting) out.push({ at: `${at}/http/sort`, error: sorting });
      if (last.capability !== cap.name) {
        out.push({
          at,
          error: svcError(
            'not_teachable',
            `the example \`${program}\` reaches \`${last.capability}\`, not \`${cap.name}\``,
            {
              hint: `give \`${cap.name}\` a parameter that \`${last.capability}\` does not take, so programs can tell them apart`,
            },
          ),
        });
      }
    }
  });
  return out;
}

/**
 * The example program of a capability the teachability check compiles: the teaching form with
 * example values for its required parameters (and, for an update, one parameter it changes).
 * The import truth check (bench/import-truth.ts) runs these against a mock of the document.
 */
export function teachableExample(
  api: string,
  cap: Capability,
  registry: Registry,
  symbols: SymbolTable,
): string | undefined {
  return withAtLeastOne(exampleProgram(api, cap, registry, symbols), cap);
}

/**
 * The example with the first parameter of `at_least_one` added when it gives none of them (the
 * example fills required parameters only; an update must change something).
 */
function withAtLeastOne(program: string | undefined, cap: Capability): string | undefined {
  const names = cap.at_least_one ?? [];
  const first = cap.params.find((p) => p.name === names[0]);
  if (program === undefined || !first || !program.endsWith(')')) return program;
  const given = (n: string) => new RegExp(`[(,]\\s*${n}=`).test(program);
  if (names.some((n) => given(n) || cap.params.find((p) => p.name === n)?.default !== undefined)) return program;
  return `${program.slice(0, -1)}${program.endsWith('()') ? '' : ', '}${first.name}=${exampleLiteral(first)})`;
}

/** A list that sorts must take `sort=`/`order=` as its order (not as parameters of its own). */
function sortingProblem(api: string, program: string, cap: Capability, registry: Registry, symbols: SymbolTable) {
  const s = cap.returns === 'rows' ? cap.http.sort : undefined;
  if (!s || !program.endsWith(')')) return undefined;
  const field = exampleSortField(registry.entity(api, cap.entity), s.fields);
  const sorted = `${program.slice(0, -1)}${program.endsWith('()') ? '' : ', '}sort="${field}", order="desc")`;
  const r = compileProgram(sorted, { registry, symbols });
  const last = r.kind === 'plan' ? r.plan.steps[r.plan.steps.length - 1] : undefined;
  if (last?.capability === cap.name && last.sort?.field === field && last.sort.order === 'desc') return undefined;
  return svcError('not_teachable', `the sorted example \`${sorted}\` for \`${cap.name}\` does not sort`, {
    hint: 'a parameter named sort or order takes those arguments: rename it, or remove `sort:` from the mapping',
  });
}
