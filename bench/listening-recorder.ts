/**
 * Loaded into a measured server process with `node --import`: when its first TCP server starts
 * listening, writes to the file named by `OPENVAALA_BENCH_LISTENING_FILE` the time since the
 * process started (`performance.now()`, ms) and the CPU time it has used (`process.cpuUsage()`,
 * user + system, ms), as `<ms> <cpu ms>`. Only `node:net` and `node:fs` are imported, which a
 * server loads anyway, so the recorder adds next to nothing to what it measures.
 */
import { writeFileSync } from 'node:fs';
import net from 'node:net';

const target = process.env.OPENVAALA_BENCH_LISTENING_FILE;
if (target) {
  const listen = net.Server.prototype.listen;
  let recorded = false;
  net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
    this.once('listening', () => {
      if (recorded) return;
      recorded = true;
      const cpu = process.cpuUsage();
      writeFileSync(target, `${performance.now().toFixed(2)} ${((cpu.user + cpu.system) / 1000).toFixed(2)}`);
    });
    return (listen as (...args: unknown[]) => net.Server).apply(this, args);
  } as typeof listen;
}
