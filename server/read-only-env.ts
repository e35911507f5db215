/**
 * Who may only read, as `svc serve` reads it at start-up (docs/auth.md "Read-only callers"):
 * `SVC_READ_ONLY=true` makes every caller read-only; `false`, empty or unset leaves it to the
 * per-tenant predicate (the credentials file), if any. The execute core applies the answer
 * (server/execute/read-only.ts).
 */
import { svcError, SvcFailure } from '../common/errors.js';

/**
 * The `readOnly` predicate of the app: every tenant with `SVC_READ_ONLY=true`, else `perTenant`
 * (undefined: nobody). Any other value stops the start with `bad_arguments`.
 *
 * @example readOnlyFromEnv({ SVC_READ_ONLY: 'true' })?.('acme') // true
 */
export function readOnlyFromEnv(
  env: Record<string, string | undefined>,
  perTenant?: (tenant: string) => boolean,
): ((tenant: string) => boolean) | undefined {
  const raw = (env.SVC_READ_ONLY ?? '').trim();
  if (raw === 'true') return () => true;
  if (raw === '' || raw === 'false') return perTenant;
  throw new SvcFailure([
    svcError('bad_arguments', `SVC_READ_ONLY=${JSON.stringify(raw.slice(0, 20))} is not true or false`, {
      hint: 'set SVC_READ_ONLY=true to let every caller only read, or unset it (false)',
    }),
  ]);
}
