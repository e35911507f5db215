/**
 * The outbound credentials file (server/credentials.ts): loading it (mode, syntax, TLS files), the
 * write-back of rotated refresh tokens (YAML with comments, JSON; atomic by rename; serialized),
 * reload, and end to end: a server whose refresh token rotates keeps working across a restart.
 */
import t, { type Test } from 'tap';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startServe } from '../../cli/commands/serve.js';
import { SvcFailure } from '../../common/errors.js';
import type { LogFields, Logger } from '../../common/log.js';
import { CREDENTIALS_ENV, CredentialsFile, loadCredentials } from '../../server/credentials.js';
import { faultRegistry, startFaultVendor } from '../_helpers/fault-vendor.js';
import { startAuthServer } from '../_helpers/oidc.js';
import { openSession, runProgram } from '../_helpers/server.js';
import { until } from '../_helpers/until.js';
import { jwt, JWT_SECRET } from './mcp/_shared.js';

const REG = faultRegistry('http://127.0.0.1:9', '{scheme: bearer, env: FAULT_TOKEN}');
const ALICE = { tenant: 'acme', subject: 'alice', entry: 'fault' };
const GLOBEX = { tenant: 'globex', entry: 'fault' };

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-creds-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Write `text` to `dir/name` with `mode` (set explicitly: the umask does not apply). */
function put(dir: string, name: string, text: string, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

/** A logger keeping every line. */
function capture(): Logger & { lines: Array<{ level: string; msg: string; fields?: LogFields }> } {
  const lines: Array<{ level: string; msg: string; fields?: LogFields }> = [];
  const at = (level: string) => (msg: string, fields?: LogFields) => void lines.push({ level, msg, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** The code of what `p` rejects with (undefined when it resolves). */
async function refusal(p: Promise<unknown>): Promise<{ code?: string; message?: string } | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return e instanceof SvcFailure ? e.errors[0] : { message: String(e) };
  }
}

const YAML = (token: string, tokenUrl = 'http://127.0.0.1:9/token') => `# Outbound credentials of the test deployment
entries:
  fault: {fallback: none} # never the environment
tenants:
  acme:
    read_only: false
    credentials:
      # the robot of acme
      fault: {scheme: oauth2_client_credentials, client_id: robot, client_secret: cs-Kd93, token_url: "${tokenUrl}"}
    users:
      alice:
        credentials:
          fault:
            scheme: oauth2_refresh_token
            client_id: svc-rt
            client_secret: rt-secret
            token_url: ${tokenUrl}
            refresh_token: "${token}" # provisioned by hand
  globex:
    credentials:
      fault: {scheme: oauth2_refresh_token, client_id: app, token_url: "${tokenUrl}", refresh_token: globex-rt-0}
`;

t.test('write-back into YAML with comments: the token replaced, the rest kept, mode 0600, by rename', async (t) => {
  const dir = tempDir(t);
  const path = put(dir, 'creds.yaml', YAML('rt-original-0'));
  const before = statSync(path);
  const log = capture();
  const file = new CredentialsFile(path, log);
  await file.writeBack(ALICE, 'rt-rotated-1');
  const text = readFileSync(path, 'utf8');
  const after = statSync(path);
  t.equal(after.mode & 0o777, 0o600, 'mode stays 0600');
  t.not(after.ino, before.ino, 'a new inode: written aside and renamed over');
  for (const c of ['# Outbound credentials of the test deployment', '# never the environment', '# the robot of acme'])
    t.ok(text.includes(c), `the comment "${c}" is kept`);
  t.match(text, /refresh_token: "rt-rotated-1" # provisioned by hand/, 'replaced in place, comment and quotes kept');
  t.notOk(text.includes('rt-original-0'), 'the old token is gone');
  t.equal(text, YAML('rt-original-0').replace('rt-original-0', 'rt-rotated-1'), 'nothing else changed');
  const loaded = await loadCredentials(path, REG);
  t.match(loaded.tenants.acme?.users.alice?.fault, { refresh_token: 'rt-rotated-1', client_id: 'svc-rt' });
  t.equal(loaded.entries.fault?.fallback, 'none');
  t.same(readdirSync(dir), ['creds.yaml'], 'no temporary file left behind');
  t.same(
    log.lines.map((l) => [l.level, l.msg]),
    [['info', 'rotated refresh token written back']],
  );
  t.notOk(JSON.stringify(log.lines).includes('rt-rotated-1'), 'the log line has no token');

  await file.writeBack(GLOBEX, 'globex-rt-1');
  const g = await loadCredentials(path, REG);
  t.match(g.tenants.globex?.credentials.fault, { refresh_token: 'globex-rt-1' }, 'a tenant credential (no subject)');
  t.match(g.tenants.acme?.users.alice?.fault, { refresh_token: 'rt-rotated-1' });
});

t.test('write-back into JSON: valid JSON, other keys kept, mode 0600, by rename', async (t) => {
  const dir = tempDir(t);
  const data = parseYaml(YAML('rt-json-0')) as Record<string, any>;
  const path = put(dir, 'creds.json', JSON.stringify(data));
  const ino = statSync(path).ino;
  await new CredentialsFile(path, capture()).writeBack(ALICE, 'rt-json-1');
  const out = JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>;
  data.tenants.acme.users.alice.credentials.fault.refresh_token = 'rt-json-1';
  t.same(out, data, 'only the token changed');
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.not(statSync(path).ino, ino);
  t.match((await loadCredentials(path, REG)).tenants.acme?.users.alice?.fault, { refresh_token: 'rt-json-1' });
});

t.test('write-backs are serialized: no lost update, the last rotation wins', async (t) => {
  const dir = tempDir(t);
  const path = put(dir, 'creds.yaml', YAML('rt-0'));
  const file = new CredentialsFile(path, capture());
  await Promise.all([
    file.writeBack(ALICE, 'rt-1'),
    file.writeBack(GLOBEX, 'globex-rt-1'),
    file.writeBack(ALICE, 'rt-2'),
    file.writeBack(ALICE, 'rt-3'),
  ]);
  const c = await loadCredentials(path, REG);
  t.match(c.tenants.acme?.users.alice?.fault, { refresh_token: 'rt-3' }, 'the last rotation');
  t.match(c.tenants.globex?.credentials.fault, { refresh_token: 'globex-rt-1' }, 'the other place was not lost');
  t.same(readdirSync(dir), ['creds.yaml']);

  // The file changed meanwhile (a reload raced a refresh): no credential there, or another scheme.
  const changed = capture();
  const gone = new CredentialsFile(path, changed);
  const text = readFileSync(path, 'utf8');
  await gone.writeBack({ tenant: 'acme', subject: 'bob', entry: 'fault' }, 'rt-bob-1');
  await gone.writeBack({ tenant: 'acme', entry: 'fault' }, 'rt-acme-1'); // a client-credentials credential
  t.equal(readFileSync(path, 'utf8'), text, 'nothing written: the file would no longer load');
  t.same(
    changed.lines.map((l) => l.level),
    ['warn', 'warn'],
  );
  const json = put(dir, 'creds.json', JSON.stringify(parseYaml(text)));
  await new CredentialsFile(json, changed).writeBack({ tenant: 'initech', entry: 'fault' }, 'rt-x');
  t.same(JSON.parse(readFileSync(json, 'utf8')), parseYaml(text), 'JSON: nothing written either');
  rmSync(json);

  rmSync(path);
  const log = capture();
  await new CredentialsFile(path, log).writeBack(ALICE, 'rt-4-Zx81');
  t.equal(log.lines[0]?.level, 'error', 'a write-back that fails is logged, never thrown');
  t.match(log.lines[0]?.fields, { tenant: 'acme', entry: 'fault', problem: 'ENOENT' });
  t.notOk(JSON.stringify(log.lines).includes('rt-4-Zx81'));
});

t.test('write-back keeps a token an operator set meanwhile (outside the rotation chain)', async (t) => {
  const dir = tempDir(t);
  const path = put(dir, 'creds.yaml', YAML('rt-0'));
  const file = new CredentialsFile(path, capture());
  await file.writeBack(ALICE, 'rt-1', ['rt-0']);
  t.match((await loadCredentials(path, REG)).tenants.acme?.users.alice?.fault, { refresh_token: 'rt-1' });
  await file.writeBack(ALICE, 'rt-2', ['rt-0', 'rt-1']);
  t.match(
    (await loadCredentials(path, REG)).tenants.acme?.users.alice?.fault,
    { refresh_token: 'rt-2' },
    'the chain goes on',
  );

  // The operator provisions a new token by hand (not yet reloaded); the old chain rotates once more.
  put(dir, 'creds.yaml', YAML('rt-by-hand'));
  const log = capture();
  const before = readFileSync(path, 'utf8');
  await new CredentialsFile(path, log).writeBack(ALICE, 'rt-3', ['rt-0', 'rt-1', 'rt-2']);
  t.equal(readFileSync(path, 'utf8'), before, "the operator's token stays, byte for byte");
  t.equal(log.lines[0]?.level, 'warn');
  t.match(log.lines[0]?.msg, /another token .*SIGHUP/);
  t.notOk(JSON.stringify(log.lines).includes('rt-by-hand'), 'no token in the log');

  const json = put(dir, 'creds.json', JSON.stringify(parseYaml(YAML('rt-json-by-hand'))));
  const jtext = readFileSync(json, 'utf8');
  await new CredentialsFile(json, capture()).writeBack(ALICE, 'rt-9', ['rt-0']);
  t.equal(readFileSync(json, 'utf8'), jtext, 'JSON: kept too');
  await new CredentialsFile(json, capture()).writeBack(ALICE, 'rt-10', ['rt-json-by-hand']);
  t.match((await loadCredentials(json, REG)).tenants.acme?.users.alice?.fault, { refresh_token: 'rt-10' });
});

t.test('reload: a good file gives the config, a malformed one undefined and an error log', async (t) => {
  const dir = tempDir(t);
  const path = put(dir, 'creds.yaml', YAML('rt-0'));
  const log = capture();
  const file = new CredentialsFile(path, log);
  const good = await file.reload(REG);
  t.match(good?.tenants.acme?.credentials.fault, { scheme: 'oauth2_client_credentials', client_id: 'robot' });
  t.equal(log.lines.at(-1)?.level, 'info');
  for (const [what, text] of [
    ['bad syntax', 'tenants: {acme: [\n'],
    ['an unknown entry', 'tenants: {acme: {credentials: {github: {scheme: bearer, token: gh-Secret-77}}}}'],
    ['an unknown scheme', 'tenants: {acme: {credentials: {fault: {scheme: magic, token: mg-Secret-77}}}}'],
  ]) {
    put(dir, 'creds.yaml', text!);
    t.equal(await file.reload(REG), undefined, what!);
    const last = log.lines.at(-1);
    t.equal(last?.level, 'error', `${what}: logged as an error`);
    t.equal(last?.fields?.code, 'credentials_config_invalid');
    t.notOk(JSON.stringify(last).includes('Secret-77'), `${what}: no value in the log`);
  }
  put(dir, 'creds.yaml', YAML('rt-0'), 0o644);
  t.equal(await file.reload(REG), undefined, 'mode 0644 on reload: refused too');
  t.match(log.lines.at(-1)?.fields?.problem, /group or others.*0644/);
});

t.test('refused at load: mode 0644, a TLS key readable by others, a cert that is not PEM', async (t) => {
  const dir = tempDir(t);
  const loose = put(dir, 'loose.yaml', YAML('rt-0'), 0o644);
  const e = await refusal(loadCredentials(loose, REG));
  t.equal(e?.code, 'credentials_config_invalid', 'mode 0644');
  t.match(e?.message, /0644/);
  t.equal((await refusal(loadCredentials(join(dir, 'missing.yaml'), REG)))?.code, 'credentials_config_invalid');

  const pem = (kind: string) => `-----BEGIN ${kind}-----\nMIIB\n-----END ${kind}-----\n`;
  const cert = put(dir, 'client.crt', pem('CERTIFICATE'), 0o644);
  const key = put(dir, 'client.key', pem('PRIVATE KEY'));
  const tls = (c: string, k: string) =>
    put(dir, 'tls.yaml', `entries:\n  fault:\n    tls: {cert: "${c}", key: "${k}"}\n`);
  const ok = await loadCredentials(tls(cert, key), REG);
  t.equal(ok.entries.fault?.tls?.cert, pem('CERTIFICATE'), 'PEM files are read (a cert may be 0644)');
  t.match(ok.entries.fault?.tls?.id, /^[0-9a-f]{16}$/);

  chmodSync(key, 0o644);
  const k = await refusal(loadCredentials(tls(cert, key), REG));
  t.equal(k?.code, 'credentials_config_invalid', 'a key file others may read');
  t.match(k?.message, /entries\.fault\.tls\.key/);
  t.notOk(k?.message?.includes('MIIB'));
  chmodSync(key, 0o600);
  const notPem = put(dir, 'cert.der', 'not a certificate at all');
  const n = await refusal(loadCredentials(tls(notPem, key), REG));
  t.equal(n?.code, 'credentials_config_invalid', 'a cert that is not PEM');
  t.match(n?.message, /not PEM/);
});

t.test('end to end: the server writes the rotated token back and a restart keeps working', async (t) => {
  const as = await startAuthServer();
  t.teardown(() => as.close());
  const accounts: string[] = [];
  const v = await startFaultVendor({
    'GET /items': async (req) => {
      const owner = await as.whoIs((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (!owner) return { status: 401, json: { error: 'invalid_token' } };
      accounts.push(owner.accountId ?? owner.clientId);
      return { json: [{ id: 1, name: 'one', kind: 'alpha' }] };
    },
  });
  t.teardown(() => v.close());
  const dir = tempDir(t);
  const entry = faultRegistry(v.url, '{scheme: bearer, env: FAULT_TOKEN}').get('fault')!;
  const schema = put(dir, 'fault.cgs.json', JSON.stringify(entry.cgs));
  const rt0 = await as.refreshTokenFor('alice');
  const path = put(dir, 'creds.yaml', YAML(rt0, as.tokenUrl));
  const env = {
    [CREDENTIALS_ENV]: path,
    SVC_INCOMING_AUTH_MODE: 'required',
    SVC_AUTH_JWT_SECRET: JWT_SECRET,
    SVC_LOG_LEVEL: 'error',
  };
  const headers = { authorization: `Bearer ${await jwt('acme', 'alice')}` };
  const tokenInFile = (): string =>
    parseYaml(readFileSync(path, 'utf8')).tenants.acme.users.alice.credentials.fault.refresh_token;

  /** Start a server on the file, run one program as alice, stop it. */
  const once = async () => {
    let printed = '';
    const running = await startServe({ schema, port: 0, host: '127.0.0.1' }, env, (s) => (printed += s));
    try {
      t.match(printed, /outbound credentials: SVC_OUTBOUND_CREDENTIALS_FILE/);
      const { path: session } = await openSession(running.listening.url, { entry_id: 'fault' }, headers);
      return await runProgram(running.listening.url, session, 'fault:Item', 'force=true', { headers });
    } finally {
      await running.stop();
    }
  };

  const first = await once();
  t.equal(first.status, 200, first.text);
  t.same(accounts, ['alice'], 'the vendor saw alice');
  const rt1 = await until('the rotated token in the file', () => tokenInFile() !== rt0 && tokenInFile());
  t.equal(as.grants('refresh_token'), 1);
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.match(readFileSync(path, 'utf8'), /# provisioned by hand/, 'the comments survive');

  const second = await once();
  t.equal(second.status, 200, `after a restart on the same file: ${second.text}`);
  t.same(accounts, ['alice', 'alice']);
  t.equal(as.grants('refresh_token'), 2, 'the restarted server refreshed with the persisted token');
  await until('rotated again', () => tokenInFile() !== rt1);
  t.notOk(first.text.includes(rt0) || second.text.includes(rt1), 'no refresh token in the answers');

  // The original token, as a server without write-back would have it: the authorization server refuses it.
  put(dir, 'creds.yaml', YAML(rt0, as.tokenUrl));
  const stale = await once();
  t.equal(stale.body.errors?.[0]?.code, 'vendor_auth_failed', 'the original token was spent');
  t.equal(accounts.length, 2);
});
