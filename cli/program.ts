/** The commander program: one module per command under `commands/`. */
import { Command } from 'commander';
import { packCommand } from './commands/pack.js';
import { schemasCommand } from './commands/schemas.js';
import { demoCommand } from './commands/demo.js';
import { catalogsCommand } from './commands/catalogs.js';
import { serveCommand } from './commands/serve.js';
import { initCommand } from './commands/init.js';
import { doctorCommand } from './commands/doctor.js';
import { loginCommand } from './commands/login.js';
import { searchCommand } from './commands/search.js';
import { contextCommand } from './commands/context.js';
import { runCommand } from './commands/run.js';

export function buildProgram(): Command {
  const program = new Command('svc')
    .description('svc: work with vendor REST APIs through catalogs, a teaching table and short programs')
    .version('0.1.0', '-V, --version')
    .showHelpAfterError('(run `svc --help` or `svc <command> --help` for usage)')
    .exitOverride();
  program.addCommand(packCommand());
  program.addCommand(catalogsCommand());
  program.addCommand(schemasCommand());
  program.addCommand(serveCommand());
  program.addCommand(demoCommand());
  program.addCommand(initCommand());
  program.addCommand(doctorCommand());
  program.addCommand(loginCommand());
  program.addCommand(searchCommand());
  program.addCommand(contextCommand());
  program.addCommand(runCommand());
  for (const c of program.commands) c.exitOverride();
  return program;
}
