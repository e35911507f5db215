/** One catalog from its tool model: a diagram, then each entity's fields, capabilities and relations. */
import type { EntityModel, RegistryRow, ToolModel } from '../api/types.js';
import { Diagram } from './Diagram.js';
import { SeedToggle, type SeedProps } from './SeedToggle.js';

export function EntryDetail(props: SeedProps & { model: ToolModel; row: RegistryRow | undefined }) {
  const { model, row } = props;
  const id = model.entry.entry_id;
  return (
    <article class="entry-detail" data-testid="entry-detail" aria-labelledby="entry-title">
      <h2 id="entry-title">
        {model.entry.label} <code>{id}</code>
      </h2>
      {row && <p>{row.description}</p>}
      <p class="muted">
        {model.overview.entity_count} entities, {model.overview.relation_edge_count} relations,{' '}
        {model.overview.verb_count} capabilities
      </p>
      <Diagram model={model} />
      {Object.entries(model.entities).map(([name, e]) => (
        <Entity key={name} api={id} name={name} entity={e} {...props} />
      ))}
    </article>
  );
}

function Entity(props: SeedProps & { api: string; name: string; entity: EntityModel }) {
  const { api, name, entity } = props;
  const seed = `${api}:${name}`;
  const refs = new Map(entity.entity_ref_links.map((l) => [l.field, l.entity]));
  return (
    <section
      class="entity"
      id={`entity-${api}-${name}`}
      data-testid={`entity-${seed}`}
      aria-labelledby={`h-${api}-${name}`}
    >
      <h3 id={`h-${api}-${name}`}>
        {name} <SeedToggle seed={seed} {...props} />
      </h3>
      <p>{entity.description}</p>
      <table class="fields">
        <caption>Fields</caption>
        <thead>
          <tr>
            <th scope="col">name</th>
            <th scope="col">type</th>
            <th scope="col">about</th>
          </tr>
        </thead>
        <tbody>
          {entity.fields.map((f) => (
            <tr key={f.name}>
              <td>
                <code>{f.name}</code>
                {f.name === entity.id_field ? <small class="muted"> id</small> : null}
              </td>
              <td>{f.type.includes('|') ? <EnumValues values={f.type.split('|')} /> : f.type}</td>
              <td>
                {f.description ?? ''}
                {refs.has(f.name) ? ` (→ ${refs.get(f.name)})` : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <table class="verbs">
        <caption>Capabilities</caption>
        <thead>
          <tr>
            <th scope="col">name</th>
            <th scope="col">kind</th>
            <th scope="col">parameters</th>
          </tr>
        </thead>
        <tbody>
          {entity.verbs.map((v) => (
            <tr key={v.name} class={v.effect === 'write' ? 'write' : ''}>
              <td>
                <code>{v.name}</code>
              </td>
              <td>
                {v.kind}
                {v.effect === 'write' ? <span class="badge">write</span> : null}
              </td>
              <td>
                {v.params.map((p, i) => (
                  <span key={p.name}>
                    {i > 0 ? ', ' : ''}
                    <code>
                      {p.name}
                      {p.required ? '' : '?'}
                    </code>
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {entity.relations.length > 0 && (
        <>
          <h4>Relations</h4>
          <ul class="relations">
            {entity.relations.map((r) => (
              <li key={r.name}>
                <code>{r.name}</code> → <a href={`#entity-${api}-${r.target}`}>{r.target}</a> ({r.cardinality}, via{' '}
                <code>{r.capability}</code>){r.description ? `: ${r.description}` : ''}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function EnumValues({ values }: { values: string[] }) {
  return (
    <span class="enum" aria-label={`one of ${values.join(', ')}`}>
      {values.map((v) => (
        <span class="tag" key={v}>
          {v}
        </span>
      ))}
    </span>
  );
}
