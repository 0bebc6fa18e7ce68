// Child process of replace-crash.test.ts: replaces one FileLogStorage stream in a loop,
// alternating a long version (40 entries) and a short one (a prefix of 15), until it is
// killed; prints "ack <version>" after every replacement that resolved.
// Arguments: <file-log-storage module URL> <root directory>.
import process from 'node:process';

const [moduleUrl, root] = process.argv.slice(2);
const { FileLogStorage } = await import(moduleUrl);
const logs = new FileLogStorage(root, {
  onProblem: (problem) => process.stderr.write(`problem ${JSON.stringify(problem)}\n`),
});
const long = Array.from({ length: 40 }, (_, index) => ({ index, pad: 'y'.repeat(200 + index) }));
const short = long.slice(0, 15);

for (let round = 0; ; round += 1) {
  const version = round % 2 === 0 ? 'short' : 'long';
  await logs.replaceStream('rewind', 'main', version === 'short' ? short : long);
  process.stdout.write(`ack ${version}\n`);
}
