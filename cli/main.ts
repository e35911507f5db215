#!/usr/bin/env node
/** The `svc` command. Only this entry point calls process.exit. */
import { buildProgram } from './program.js';
import { reportFailure } from './report.js';

buildProgram(process.argv)
  .then((program) => program.parseAsync(process.argv))
  .then(
    () => {
      if (process.exitCode === undefined) process.exitCode = 0;
    },
    (e: unknown) => {
      process.exitCode = reportFailure(e);
    },
  );
