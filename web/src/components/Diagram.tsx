/** The entities of a catalog and their relations as an SVG diagram (layout in diagram-layout.ts). */
import type { ToolModel } from '../api/types.js';
import { edgePaths, layoutNodes, type Edge } from './diagram-layout.js';

export function Diagram({ model }: { model: ToolModel }) {
  const names = Object.keys(model.entities);
  const edges: Edge[] = names.flatMap((from) =>
    model.entities[from]!.relations.map((r) => ({ from, to: r.target, label: r.name, many: r.cardinality === 'many' })),
  );
  const { nodes, width, height } = layoutNodes(names);
  const paths = edgePaths(nodes, edges);
  const id = model.entry.entry_id;
  const description = edges.map((e) => `${e.from}.${e.label} -> ${e.to} (${e.many ? 'many' : 'one'})`).join('; ');
  return (
    <figure class="diagram" data-testid="entity-diagram">
      <svg
        viewBox={`0 0 ${Math.ceil(width)} ${Math.ceil(height)}`}
        width={Math.ceil(width)}
        height={Math.ceil(height)}
        role="img"
        aria-labelledby={`dg-title-${id} dg-desc-${id}`}
        preserveAspectRatio="xMidYMid meet"
      >
        <title id={`dg-title-${id}`}>Entities and relations of {model.entry.label}</title>
        <desc id={`dg-desc-${id}`}>{description || 'no relations'}</desc>
        <defs>
          <marker
            id={`arrow-${id}`}
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L10,5 L0,10 z" class="arrow-head" />
          </marker>
          <marker
            id={`arrows-${id}`}
            viewBox="0 0 16 10"
            refX="15"
            refY="5"
            markerWidth="11"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L8,5 L0,10 z M7,0 L15,5 L7,10 z" class="arrow-head" />
          </marker>
        </defs>
        {paths.map((p) => (
          <g class="edge" key={`${p.edge.from}.${p.edge.label}`}>
            <path d={p.d} marker-end={`url(#${p.edge.many ? 'arrows' : 'arrow'}-${id})`} />
            <text x={p.lx} y={p.ly} text-anchor="middle" class="edge-label">
              {p.edge.label}
            </text>
          </g>
        ))}
        {nodes.map((n) => (
          <a href={`#entity-${id}-${n.name}`} key={n.name} class="node">
            <rect x={n.x} y={n.y} width={n.w} height={n.h} rx="6" />
            <text x={n.x + n.w / 2} y={n.y + 19} text-anchor="middle" class="node-name">
              {n.name}
            </text>
            <text x={n.x + n.w / 2} y={n.y + 35} text-anchor="middle" class="node-meta">
              {model.entities[n.name]!.fields.length} fields, {model.entities[n.name]!.verbs.length} verbs
            </text>
          </a>
        ))}
      </svg>
      <figcaption class="muted">
        One arrow per relation (double head: many rows). Click an entity to jump to it.
      </figcaption>
    </figure>
  );
}
