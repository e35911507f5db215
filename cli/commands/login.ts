/**
 * `svc login`: device OAuth exists only on managed hosts (`/v1/incoming-auth/device/*`). This
 * build probes the route and, when the server has none, says so and exits 3.
 */
import { Command } from 'commander';
import { firstError, ServerClient } from '../terminal/client.js';
import { TERMINAL_EXIT, TerminalError } from '../terminal/errors.js';
import { loadProfile } from '../workspace/profile.js';

export function loginCommand(): Command {
  return new Command('login')
    .description('device login of a managed host; a self-hosted server has none: use `svc init --api-key <key>`')
    .action(async () => {
      const { profile } = loadProfile();
      const client = new ServerClient(profile);
      const probe = await client.request('/v1/incoming-auth/device/code', {
        method: 'POST',
        body: '{}',
        contentType: 'application/json',
      });
      // Device login starts without credentials: a refusal (401/403) means no such route is open either.
      if ([401, 403, 404, 405].includes(probe.status))
        throw new TerminalError(
          'device_login_unavailable',
          `${client.base} has no device login (/v1/incoming-auth/device/* answered ${probe.status}${probe.status < 404 ? ` ${firstError(probe).code}` : ''}); only managed hosts have it`,
          `use an API key instead: \`svc init --server ${client.base} --api-key <key>\``,
          TERMINAL_EXIT.server,
        );
      throw new TerminalError(
        'device_login_unsupported',
        `${client.base} offers device login, but this svc build does not implement the hosted device flow`,
        `use an API key instead: \`svc init --server ${client.base} --api-key <key>\``,
        TERMINAL_EXIT.server,
      );
    });
}
