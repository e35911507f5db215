/**
 * Helpers of the terminal tests (terminal-*.test.ts): run the `svc` command (see `svcArgv`) as a
 * subprocess in a temp workspace (`SVC_WORKSPACE`, also its cwd), and read the workspace files.
 */
import type { Test } from 'tap';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, svcArgv } from './cli.js';
import { hostSlug } from '../../cli/workspace/paths.js';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `svc <args>` in workspace `ws` (also its cwd), with `input` on stdin and `env` added to its environment. */
export function term(ws: string, args: string[], input = '', env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, svcArgv(args), {
      cwd: ws,
      env: childEnv({ ...env, SVC_WORKSPACE: ws }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

export async function workspace(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-terminal-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export function sessionDir(ws: string, server: string): string {
  const id = readFileSync(join(ws, '.svc', 'hosts', hostSlug(server), 'current'), 'utf8').trim();
  return join(ws, '.svc', 's', id);
}

export function meta(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of readFileSync(join(dir, 'meta.txt'), 'utf8').split('\n')) {
    const i = l.indexOf(': ');
    if (i > 0 && !(l.slice(0, i) in out)) out[l.slice(0, i)] = l.slice(i + 2);
  }
  return out;
}

export const records = (dir: string) => readdirSync(join(dir, 'out')).sort();
