/**
 * `npm run bench`: every benchmark, one after the other — storage (`storage.ts`), then a
 * 100-step `openvaala exec` turn (`exec-steps.ts`), then sandboxed file operations
 * (`sandbox-files.ts`).
 */
import { runExecStepsBenchmark } from './exec-steps.js';
import { runSandboxFilesBenchmark } from './sandbox-files.js';
import { runStorageBenchmark } from './storage.js';

try {
  console.log('== storage');
  await runStorageBenchmark(process.argv[2]);
  console.log('\n== exec steps');
  await runExecStepsBenchmark();
  console.log('\n== sandboxed file operations');
  await runSandboxFilesBenchmark();
} catch (error) {
  console.error((error as Error).stack ?? String(error));
  process.exit(1);
}
