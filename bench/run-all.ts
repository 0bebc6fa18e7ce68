/**
 * `npm run bench`: every benchmark, one after the other — storage (`storage.ts`), W20 and W100
 * `openvaala exec` turns (`exec-steps.ts`), one model answer through the AI SDK and through the
 * runtime's own Responses client (`model-stream.ts`), the server's memory over 100 conversations and an
 * unwatched 200,000-delta turn (`server-memory.ts`), `apply_patch` on files up to 50 MB
 * (`apply-patch.ts`), sandboxed file operations (`sandbox-files.ts`), then the output rules
 * (`tool-output.ts`), the command line's start-up (`startup.ts`) and the fan-out of deltas to
 * WebSocket clients (`fan-out.ts`, with the 100-client latency case) and the terminal UI's
 * rendering of a 5,000-item conversation (`tui-render.ts`). The comparison with the
 * Codex CLI (`peers.ts`, `npm run bench:peers`) is not part of it: it installs Codex first.
 */
import { runApplyPatchBenchmark } from './apply-patch.js';
import { runExecStepsBenchmark } from './exec-steps.js';
import { runFanOutBenchmark } from './fan-out.js';
import { runModelStreamBenchmark } from './model-stream.js';
import { runSandboxFilesBenchmark } from './sandbox-files.js';
import { runServerMemoryBenchmark } from './server-memory.js';
import { runStartupBenchmark } from './startup.js';
import { runStorageBenchmark } from './storage.js';
import { runToolOutputBenchmark } from './tool-output.js';
import { runTuiRenderBenchmark } from './tui-render.js';

try {
  console.log('== storage');
  await runStorageBenchmark(process.argv[2]);
  console.log('\n== exec steps');
  await runExecStepsBenchmark();
  console.log('\n== model stream');
  await runModelStreamBenchmark();
  console.log('\n== server memory');
  await runServerMemoryBenchmark();
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
  console.log('\n== terminal UI render');
  await runTuiRenderBenchmark(1);
} catch (error) {
  console.error((error as Error).stack ?? String(error));
  process.exit(1);
}
