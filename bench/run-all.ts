/**
 * `npm run bench`: every benchmark, one after the other — storage (`storage.ts`), a
 * 100-step `openvaala exec` turn (`exec-steps.ts`), `apply_patch` on files up to 50 MB
 * (`apply-patch.ts`), sandboxed file operations (`sandbox-files.ts`), then the output rules
 * (`tool-output.ts`), the command line's start-up (`startup.ts`) and the fan-out of deltas to
 * WebSocket clients (`fan-out.ts`).
 */
import { runApplyPatchBenchmark } from './apply-patch.js';
import { runExecStepsBenchmark } from './exec-steps.js';
import { runFanOutBenchmark } from './fan-out.js';
import { runSandboxFilesBenchmark } from './sandbox-files.js';
import { runStartupBenchmark } from './startup.js';
import { runStorageBenchmark } from './storage.js';
import { runToolOutputBenchmark } from './tool-output.js';

try {
  console.log('== storage');
  await runStorageBenchmark(process.argv[2]);
  console.log('\n== exec steps');
  await runExecStepsBenchmark();
  console.log('\n== apply_patch on large files');
  await runApplyPatchBenchmark();
  console.log('\n== sandboxed file operations');
  await runSandboxFilesBenchmark();
  console.log('\n== tool output');
  await runToolOutputBenchmark();
  console.log('\n== start-up');
  await runStartupBenchmark();
  console.log('\n== delta fan-out');
  await runFanOutBenchmark();
} catch (error) {
  console.error((error as Error).stack ?? String(error));
  process.exit(1);
}
