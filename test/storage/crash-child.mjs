// Child process of crash.test.ts: appends batches to one FileLogStorage stream until it is
// killed, printing "ack <firstSeq> <lastSeq> <run> <batch> <size>" after every append that
// resolved (and so was acknowledged as durable).
// Arguments: <file-log-storage module URL> <root directory> <run number>.
import process from 'node:process';

const [moduleUrl, root, run] = process.argv.slice(2);
const { FileLogStorage } = await import(moduleUrl);
const logs = new FileLogStorage(root, {
  onProblem: (problem) => process.stderr.write(`problem ${JSON.stringify(problem)}\n`),
});

for (let batch = 1; ; batch += 1) {
  const size = 1 + ((batch * 7919 + Number(run) * 31) % 60);
  const values = Array.from({ length: size }, (_, index) => ({
    run: Number(run),
    batch,
    index,
    pad: 'x'.repeat((batch * 13 + index * 7) % 300),
  }));
  const entries = await logs.append('crash', 'main', values);
  // Writes to a pipe are synchronous on Linux: the line is out before the next append starts.
  process.stdout.write(`ack ${entries[0].seq} ${entries[entries.length - 1].seq} ${run} ${batch} ${size}\n`);
}
