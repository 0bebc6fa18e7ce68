/**
 * `npm run bench`: every benchmark, one after the other — storage (`storage.ts`), then a
 * 100-step `openvaala exec` turn (`exec-steps.ts`), then the output rules (`tool-output.ts`).
 */
import { runExecStepsBenchmark } from './exec-steps.js';
import { runStorageBenchmark } from './storage.js';
import { runToolOutputBenchmark } from './tool-output.js';

try {
  console.log('== storage');
  await runStorageBenchmark(process.argv[2]);
  console.log('\n== exec steps');
  await runExecStepsBenchmark();
  console.log('\n== tool output');
  await runToolOutputBenchmark();
} catch (error) {
  console.error((error as Error).stack ?? String(error));
  process.exit(1);
}
