/**
 * Test helper: a vendor of vaults, as fixtures/openapi/nested-bodies.yaml describes, that checks
 * every request body as a validating vendor does (422 with the reason otherwise): a PUT needs
 * `location` and `properties.kind` (one of standard, premium) and no key the document does not
 * declare; a PATCH and a key rotation need a JSON object body (an empty one is valid), the
 * rotation's wrapped under `options`. A real node:http server on 127.0.0.1 (the fault vendor's),
 * recording every request.
 */
import { startFaultVendor, type FaultVendor, type RecordedRequest, type Reply } from './fault-vendor.js';

type Row = Record<string, unknown>;

const isObject = (v: unknown): v is Row => v !== null && typeof v === 'object' && !Array.isArray(v);
const refuse = (message: string): Reply => ({ status: 422, json: { error: { message } } });

/** The JSON object a request carries, or the 422 a validating vendor answers. */
function objectBody(req: RecordedRequest): Row | Reply {
  if (!/application\/json/.test(String(req.headers['content-type']))) return refuse('the body is required (JSON)');
  try {
    const body: unknown = JSON.parse(req.body);
    return isObject(body) ? body : refuse('the body must be an object');
  } catch {
    return refuse('malformed JSON');
  }
}

const isReply = (v: Row | Reply): v is Reply => typeof (v as Reply).status === 'number';

/** Why a PUT body breaks the document's schema, or undefined. */
function putProblem(body: Row): string | undefined {
  const extra = Object.keys(body).filter((k) => !['location', 'tags', 'properties'].includes(k));
  if (extra.length) return `unknown keys: ${extra.join(', ')}`;
  if (typeof body.location !== 'string') return 'location is required';
  const p = body.properties;
  if (!isObject(p)) return 'properties is required (an object)';
  if (p.kind !== 'standard' && p.kind !== 'premium') return 'properties.kind must be standard or premium';
  if (p.encryption !== undefined && (!isObject(p.encryption) || typeof p.encryption.keySource !== 'string'))
    return 'properties.encryption needs keySource';
  return undefined;
}

/** Start the vendor on 127.0.0.1 and a free port, with one vault `v1`. */
export async function startVaultVendor(): Promise<FaultVendor> {
  const vaults = new Map<string, Row>([
    ['v1', { id: 'id-v1', name: 'v1', location: 'north', tags: {}, properties: { kind: 'standard', size: 1 } }],
  ]);
  return startFaultVendor({
    'GET /v1/vaults': () => ({ json: [...vaults.values()] }),
    'GET /v1/vaults/:name': (req) => {
      const v = vaults.get(req.params.name!);
      return v ? { json: v } : { status: 404, json: { error: { message: 'not found' } } };
    },
    'PUT /v1/vaults/:name': (req) => {
      const body = objectBody(req);
      if (isReply(body)) return body;
      const problem = putProblem(body);
      if (problem) return refuse(problem);
      const v = { id: `id-${req.params.name!}`, name: req.params.name!, tags: {}, ...body };
      vaults.set(req.params.name!, v);
      return { json: v };
    },
    'PATCH /v1/vaults/:name': (req) => {
      const body = objectBody(req);
      if (isReply(body)) return body;
      const v = vaults.get(req.params.name!);
      if (!v) return { status: 404, json: { error: { message: 'not found' } } };
      if (isObject(body.properties)) v.properties = { ...(v.properties as Row), ...body.properties };
      if (isObject(body.tags)) v.tags = body.tags;
      return { json: v };
    },
    'POST /v1/vaults/:name/rotate': (req) => {
      const body = objectBody(req);
      if (isReply(body)) return body;
      return isObject(body.options) ? { status: 202, json: {} } : refuse('options is required');
    },
  });
}
