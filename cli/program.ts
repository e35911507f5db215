/**
 * The commander program: one module per command under `commands/`, imported only when needed.
 * `svc <command>` loads that command's module alone (so `svc run` does not load the server, the
 * MCP SDK or pino); `svc --version` loads none; help, no command and unknown commands load all,
 * because commander's help lists every command and suggests the nearest name.
 */
import { Command } from 'commander';

type Loader = () => Promise<Command>;

/** name -> the command's module; the order is the order of `svc --help`. */
const COMMANDS: Record<string, Loader> = {
  pack: async () => (await import('./commands/pack.js')).packCommand(),
  import: async () => (await import('./commands/import.js')).importCommand(),
  catalogs: async () => (await import('./commands/catalogs.js')).catalogsCommand(),
  schemas: async () => (await import('./commands/schemas.js')).schemasCommand(),
  serve: async () => (await import('./commands/serve.js')).serveCommand(),
  demo: async () => (await import('./commands/demo.js')).demoCommand(),
  init: async () => (await import('./commands/init.js')).initCommand(),
  doctor: async () => (await import('./commands/doctor.js')).doctorCommand(),
  login: async () => (await import('./commands/login.js')).loginCommand(),
  search: async () => (await import('./commands/search.js')).searchCommand(),
  context: async () => (await import('./commands/context.js')).contextCommand(),
  run: async () => (await import('./commands/run.js')).runCommand(),
};

/**
 * The commands `args` (argv without node and the script) needs: the one it names, none for a bare
 * `--version`, else all. The program's own options (-V, -h) take no value, so the first argument
 * not starting with `-` is the command.
 */
export function commandsFor(args: readonly string[]): string[] {
  const name = args.find((a) => !a.startsWith('-'));
  if (name !== undefined && Object.hasOwn(COMMANDS, name)) return [name];
  if (name === undefined && args.length > 0 && args.every((a) => a === '-V' || a === '--version')) return [];
  return Object.keys(COMMANDS);
}

/** The `svc` program with the commands `argv` (as `process.argv`) needs; see `commandsFor`. */
export async function buildProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const program = new Command('svc')
    .description('svc: work with vendor REST APIs through catalogs, a teaching table and short programs')
    .version('0.1.0', '-V, --version')
    .showHelpAfterError('(run `svc --help` or `svc <command> --help` for usage)')
    .exitOverride();
  const names = commandsFor(argv.slice(2));
  for (const command of await Promise.all(names.map((n) => COMMANDS[n]!()))) program.addCommand(command);
  for (const c of program.commands) c.exitOverride();
  return program;
}
