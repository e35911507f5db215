/** Parsing a `--port` value, shared by `svc serve` and `svc demo`. */
import { InvalidArgumentError } from 'commander';

/** A TCP port number from a command-line value (a usage error otherwise). */
export function parsePort(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return n;
}
