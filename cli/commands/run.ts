/**
 * `svc run`: compile a program locally against the active session's symbols and fetched
 * catalogs, post the resolved plan to `/execute/{ph}/{sid}/plan`, print the answer, and record
 * `out/NNNN-plan/` or `out/NNNN-run/`. Continuations (`page(pgN)[..]`, `wait(oN)`, `cancel(oN)`)
 * go as text to the program route.
 */
import { Command, Option } from 'commander';
import { compileProgram } from '../../compiler/compile.js';
import { renderDiagnostic } from '../../compiler/render-diagnostic.js';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { field, firstError, formatOf, ServerClient, throwIfAuth, type HttpAnswer } from '../terminal/client.js';
import { sendContinuation, sendPlan, type Sender, type Sent } from '../terminal/live.js';
import { progressWanted } from '../terminal/progress.js';
import { ACCEPT, answerMeta, record, type AcceptName } from '../terminal/record.js';
import { TERMINAL_EXIT, usageError } from '../terminal/errors.js';
import { safeText } from '../terminal/safe-text.js';
import { hostSlug } from '../workspace/paths.js';
import { loadProfile } from '../workspace/profile.js';
import { activeSession } from '../workspace/session.js';

interface RunFlags {
  mode: 'plan' | 'run';
  accept: AcceptName;
  wait: boolean;
  force?: boolean;
  program?: string;
  planCommitRef?: string;
  quiet?: boolean;
  progress?: boolean;
  json?: boolean;
}

/** The exit status of a run stopped by Ctrl-C (128 + SIGINT), as shells report it. */
const INTERRUPTED = 130;

const bool = (v: string): boolean => {
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw usageError('bad_arguments', `--wait takes true or false, not \`${v}\``, 'write --wait=false');
};

export function runCommand(): Command {
  return new Command('run')
    .description('compile a program locally and run it on the active session (program from -e or stdin)')
    .addOption(
      new Option('--mode <mode>', 'plan: dry-run, mints a pcN; run: live').choices(['plan', 'run']).default('run'),
    )
    .addOption(new Option('--accept <format>', 'answer format').choices(Object.keys(ACCEPT)).default('plain'))
    .option('--wait <bool>', 'false: start the run in the background and print its wait(oN) line', bool, true)
    .option('--force', 'pass the review gate without a plan_commit_ref')
    .option('--plan-commit-ref <pcN>', 'run the plan a `--mode plan` dry-run of the same program accepted')
    .option('-e, --program <program>', 'the program text (default: read from stdin)')
    .option('--quiet', 'no live status line on stderr')
    .option('--progress', 'draw the live status line even when stderr is not a terminal')
    .option('--json', 'print one JSON document: the record, HTTP status, _meta.svc and the answer as JSON')
    .action(async (opts: RunFlags) => {
      if (opts.planCommitRef !== undefined && !/^pc\d+$/.test(opts.planCommitRef))
        throw usageError(
          'bad_arguments',
          `--plan-commit-ref takes pcN, not \`${opts.planCommitRef}\``,
          'use the pcN that `svc run --mode plan` printed',
        );
      const text = opts.program ?? (await readStdin());
      if (text.trim() === '')
        throw usageError('bad_arguments', 'the program is empty', "pass it with -e '<program>' or on stdin");
      const { root, profile } = loadProfile();
      const slug = hostSlug(profile.server);
      const session = activeSession(root, slug);
      if (!session)
        throw usageError(
          'no_active_context',
          `no active context for ${profile.server}`,
          'run `svc context` with api:Entity seeds first, for example `svc context brewery:Beer` (`svc search <intent>` lists seeds)',
        );
      const meta = session.readMeta();
      const registry = session.registry(meta);
      const symbols = session.readSymbols();
      const compiled = compileProgram(text, { registry, symbols });
      if (compiled.kind === 'error') {
        if (compiled.diagnostics.some((d) => d.code === 'legacy_symbol'))
          process.stderr.write(
            'legacy_symbol: the terminal rejects p# symbols\n  hint: write fields and parameters by their wire names, e.g. e1(city="Berlin")[name]\n',
          );
        for (const d of compiled.diagnostics) process.stderr.write(renderDiagnostic(text, d) + '\n');
        process.exitCode = TERMINAL_EXIT.program;
        return;
      }
      const client = new ServerClient(profile);
      const sender: Sender = {
        client,
        sessionPath: `/execute/${meta.prompt_hash}/${meta.session}`,
        accept: ACCEPT[opts.accept],
        progress: !opts.json && progressWanted(opts, process.stderr.isTTY),
      };
      const kind = opts.mode === 'plan' ? 'plan' : 'run';
      let sent: Sent;
      let planRecord: Record<string, unknown>;
      if (compiled.kind === 'continuation') {
        if (opts.mode === 'plan')
          throw usageError(
            'bad_arguments',
            'a continuation has no dry-run',
            'leave out --mode plan for page(..), wait(..) and cancel(..)',
          );
        planRecord = { continuation: text.trim() };
        sent = await sendContinuation(sender, text);
      } else {
        planRecord = { commit_id: compiled.commit_id, review: compiled.review, plan: compiled.plan };
        sent = await sendPlan(sender, {
          plan: compiled.plan,
          program: text,
          mode: opts.mode === 'plan' ? 'plan' : 'live',
          wait: opts.wait,
          ...(opts.force ? { force: true } : {}),
          ...(opts.planCommitRef ? { plan_commit_ref: opts.planCommitRef } : {}),
        });
        if (sent.operation) planRecord.operation = sent.operation;
      }
      const { answer } = sent;
      const base = sender.sessionPath;
      throwIfAuth(answer, client.base, meta.seeds);
      const svcMeta = answerMeta(answer, opts.accept);
      const dir = await record(session, kind, text, planRecord, answer, opts.accept, svcMeta, client, base);
      if (opts.json) {
        const doc = JSON.parse(readFileSync(join(dir, 'body.json'), 'utf8')) as Record<string, unknown>;
        process.stdout.write(JSON.stringify({ record: relative(session.dir, dir), ...doc }, null, 2) + '\n');
      } else process.stdout.write(printable(answer));
      if (sent.interrupted) process.exitCode = INTERRUPTED;
      else if (answer.status >= 300) {
        const code = field(svcMeta.code) || firstError(answer).code;
        if (['unknown_session', 'session_stale', 'catalog_mismatch'].includes(code))
          process.stderr.write(
            `svc: ${safeText(code)}: this client session cannot continue; start a new one: svc context --new ${meta.seeds.join(' ')}\n`,
          );
        process.exitCode = TERMINAL_EXIT.program;
      }
    });
}

/**
 * The answer as printed: JSON, NDJSON and TOON exactly as they came (data a program reads); plain
 * text (or anything else) with its control characters shown escaped (safe-text.ts). Ends with a newline.
 */
function printable(answer: HttpAnswer): string {
  const format = formatOf(answer.contentType);
  const text = format === 'json' || format === 'ndjson' || format === 'toon' ? answer.text : safeText(answer.text);
  return text.endsWith('\n') || text === '' ? text : text + '\n';
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    throw usageError(
      'bad_arguments',
      'no program: pass -e <program> or pipe it on stdin',
      "for example svc run -e 'e1[name]'",
    );
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
