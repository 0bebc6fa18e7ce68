/**
 * Loaded into a measured Node.js process with `node --import`: when the process exits, writes its
 * peak resident memory (VmHWM of `/proc/self/status`, in KiB; proc(5)) to the file named by
 * `OPENVAALA_BENCH_PEAK_FILE`. Nothing else is imported, so it adds next to nothing to the peak.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const target = process.env.OPENVAALA_BENCH_PEAK_FILE;
if (target) {
  process.once('exit', () => {
    const status = readFileSync('/proc/self/status', 'utf8');
    writeFileSync(target, /VmHWM:\s+(\d+)/.exec(status)?.[1] ?? '0');
  });
}
