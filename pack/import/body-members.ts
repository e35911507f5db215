/**
 * The members of a request body taught as flat parameters: the body's properties (inside its
 * wrapper), and the members of a property that is itself an object with named properties
 * (`{"location": .., "properties": {"kind": .., "size": ..}}` -> location, kind, size), sent
 * nested by the mapping's `body` template. A member is required only when every object it is
 * nested in is required and it is required in its parent. Nested objects are opened breadth
 * first, at most `MAX_BODY_NESTING` levels deep and while the body's parameters stay at most
 * `MAX_BODY_PARAMS`; an object not opened stays one JSON value, and says why.
 */
import { camelName, type NameSet } from './names.js';
import { isObj, objectShape, toType, typeOf, unwrap, type Schema } from './schema.js';

/** Levels of nested objects whose members become parameters (`properties.kind` is 1, `properties.disk.size` 2). */
export const MAX_BODY_NESTING = 2;
/** Most parameters a request body is taught by once nested objects are opened. */
export const MAX_BODY_PARAMS = 32;

/** One body member to teach: a property of the body or of a nested object of it. */
export interface BodyLeaf {
  wire: string;
  schema: Schema;
  required: boolean;
  /** Keys of the objects it is nested in, below the body (inside its wrapper); `[]` at the top. */
  at: string[];
  /** Why a nested object stays one JSON value, or what a member's parent requires of it. */
  note?: string;
}

interface Node extends BodyLeaf {
  members?: Node[];
}

/**
 * The object schema whose members a property may be taught by: an object with named properties
 * (not a map, a list, a union of several objects, read-only or deprecated).
 */
function openable(s: Schema): Schema | undefined {
  const u = unwrap(s);
  if (!isObj(u) || u.readOnly === true || s.readOnly === true || s.deprecated === true) return undefined;
  if (Array.isArray(u.oneOf) || Array.isArray(u.anyOf)) return undefined;
  if (typeOf(u) !== 'object' && !Array.isArray(u.allOf)) return undefined;
  return objectShape(u).props.size > 0 ? u : undefined;
}

/**
 * The leaves of a body whose properties are `props` (with `required`), in document order, each
 * nested object opened in place. `open(wire)` says whether a top-level property may be opened
 * (not a file part or a part with its own encoding).
 */
export function bodyLeaves(
  props: Map<string, Schema>,
  required: Set<string>,
  open: (wire: string) => boolean = () => true,
): BodyLeaf[] {
  const top: Node[] = [...props].map(([wire, schema]) => ({ wire, schema, required: required.has(wire), at: [] }));
  let count = top.length;
  let level: Node[] = top.filter((n) => open(n.wire));
  for (let depth = 1; depth <= MAX_BODY_NESTING && level.length > 0; depth++) {
    const next: Node[] = [];
    for (const node of level) {
      const inner = openable(node.schema);
      if (!inner) continue;
      const shape = objectShape(inner);
      const members = [...shape.props].filter(([, s]) => s.readOnly !== true);
      if (members.length === 0) continue;
      const unmappable = members.find(([, m]) => !toType(m) && !openable(m));
      if (unmappable) {
        node.note = `member \`${unmappable[0]}\` has no mappable type: taught as one JSON value`;
        continue;
      }
      if (node.required && !members.some(([k]) => shape.required.has(k))) {
        node.note = 'a required object with no required member: taught as one JSON value (pass {} at least)';
        continue;
      }
      if (count - 1 + members.length > MAX_BODY_PARAMS) {
        node.note = `an object of ${members.length} members: taught as one JSON value (the body would pass ${MAX_BODY_PARAMS} parameters)`;
        continue;
      }
      count += members.length - 1;
      const parent = node.at.length ? `${node.at.join('.')}.${node.wire}` : node.wire;
      node.members = members.map(([wire, schema]) => {
        const inParent = shape.required.has(wire);
        const member: Node = { wire, schema, required: node.required && inParent, at: [...node.at, node.wire] };
        if (inParent && !node.required)
          member.note = `required in \`${parent}\`, which is optional: pass it with any other member of \`${parent}\``;
        return member;
      });
      next.push(...node.members);
    }
    level = next;
  }
  for (const n of level)
    if (openable(n.schema)) n.note ??= `nested deeper than ${MAX_BODY_NESTING} levels: taught as one JSON value`;
  const out: BodyLeaf[] = [];
  const walk = (n: Node) => (n.members ? n.members.forEach(walk) : out.push(n));
  top.forEach(walk);
  return out;
}

/**
 * The parameter name of a nested member `base` (its wire name made a name): itself, or, when
 * another parameter is named so (`names`, or another leaf of the body: `bases` holds every
 * leaf's, this one's included), prefixed by its parent's name in camelCase (`properties.name` ->
 * `propertiesName`).
 */
export function memberName(leaf: BodyLeaf, base: string, names: NameSet, bases: string[]): string {
  const clash = names.has(base) || bases.filter((b) => b === base).length > 1;
  return clash ? camelName(`${leaf.at.at(-1)!} ${base}`) : base;
}
