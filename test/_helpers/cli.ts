/**
 * Test helpers for svc as a real process: spawn the `svc` command (see `svcArgv`), read what it
 * prints, wait for a line, and kill it at teardown.
 */
import type { Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
/** The built command (`npm run build`), run when it is current. */
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
/** Its source, run through tsx when dist/ is older than the sources. */
const MAIN_SOURCE = join(ROOT, 'cli', 'main.ts');
/** tsx's loader resolved from here, so a child whose cwd is a temp workspace still finds it. */
const TSX = import.meta.resolve('tsx');

/**
 * The first source file (path from the root) whose build in dist/ is missing or older than it;
 * undefined when dist/ is current. The sources are the `.ts` files under the `include` folders of
 * tsconfig.json; `tsc` writes every output on each build, so an output older than its source
 * means the source changed after the last build.
 */
export function staleSource(): string | undefined {
  const { include } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] };
  for (const dir of include) {
    for (const rel of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts') || rel.endsWith('.d.ts')) continue;
      const built = statSync(join(ROOT, 'dist', dir, rel.replace(/\.ts$/, '.js')), { throwIfNoEntry: false });
      if (!built || built.mtimeMs < statSync(join(ROOT, dir, rel)).mtimeMs) return join(dir, rel);
    }
  }
  return undefined;
}

/**
 * The `node` arguments that run `svc <args>`: dist/cli/main.js when dist/ is current (as in
 * `npm test`, which builds first), else cli/main.ts through tsx. So a test never runs a build
 * older than the sources: run straight after an edit (`npx tap test/cli/serve.test.ts`), it runs
 * the edited code, with no build step. Decided at each spawn; checking costs a few hundred stats.
 */
export function svcArgv(args: string[]): string[] {
  return staleSource() === undefined ? [MAIN, ...args] : ['--import', TSX, MAIN_SOURCE, ...args];
}

/** Our environment without any SVC_ variable (and without tap's hooks), plus `extra`. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const k of Object.keys(env)) if (k.startsWith('SVC_')) delete env[k];
  delete env.NODE_OPTIONS;
  return { ...env, ...extra };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Svc {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves with the first match of `re` on stdout; rejects if the process exits first or after `ms`. */
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exited: Promise<Exit>;
}

/** Spawn `svc <args>` (see `svcArgv`) in the repository root; killed at teardown if still running. */
export function svc(t: Test, args: string[], env: Record<string, string> = {}): Svc {
  const child = spawn(process.execPath, svcArgv(args), {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let done = false;
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
    for (const l of listeners) l();
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => {
      done = true;
      for (const l of listeners) l();
      resolve({ code, signal });
    }),
  );
  t.teardown(() => {
    if (!done) child.kill('SIGKILL');
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    waitFor: (re, ms = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(stdout);
          if (m) {
            finish();
            resolve(m);
          } else if (done) {
            finish();
            reject(new Error(`exited before ${re}; stdout: ${stdout}\nstderr: ${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no ${re} within ${ms} ms; stdout: ${stdout}\nstderr: ${stderr}`));
        }, ms);
        const finish = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      }),
  };
}

/** Run svc to completion (a start-up failure or `--once`). */
export async function svcOnce(
  t: Test,
  args: string[],
  env: Record<string, string> = {},
): Promise<Exit & { stdout: string; stderr: string }> {
  const p = svc(t, args, env);
  const exit = await p.exited;
  return { ...exit, stdout: p.stdout, stderr: p.stderr };
}

/** Start `svc serve` and wait for the URL it prints. */
export async function serve(t: Test, args: string[], env: Record<string, string> = {}): Promise<Svc & { url: string }> {
  const p = svc(t, ['serve', ...args], env);
  const m = await p.waitFor(/listening on (http:\/\/\S+)\n/);
  return Object.assign(p, { url: m[1]! });
}
