/** The memory session repository runs the shared case suite. */
import { MemorySessionRepository } from '../../../server/execute/memory-repository.js';
import { repositorySuite } from './repository.case.js';

repositorySuite('memory', async ({ limits, now }) => ({
  repo: new MemorySessionRepository(limits, now),
  close: async () => {},
}));
