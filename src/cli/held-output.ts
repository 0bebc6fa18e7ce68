/**
 * Output that waits while a question is on the terminal. `openvaala exec` keeps streaming a
 * turn while it asks for an approval (other tool calls of the step start, a subagent writes,
 * a retry is announced); written at once, that text would land in the middle of the question
 * and of what the person is typing. Held, it is written in its order once the answer is in.
 */
import type { OutputStreams } from './exec-output.js';

/** A write kept back: the stream it was meant for and its arguments. */
interface HeldWrite {
  stream: NodeJS.WritableStream;
  args: unknown[];
}

/** Streams that write through until {@link HeldOutput.hold}, then keep every write until {@link HeldOutput.release}. */
export class HeldOutput {
  /** The streams to write to: stdout and stderr as given, with writes held while a question is asked. */
  readonly streams: OutputStreams;
  private held: HeldWrite[] | undefined;

  /** @param target where writes go (and held writes go on release) */
  constructor(target: OutputStreams) {
    this.streams = { stdout: this.wrap(target.stdout), stderr: this.wrap(target.stderr) };
  }

  /** Whether writes are being held. */
  get holding(): boolean {
    return this.held !== undefined;
  }

  /** Keeps every later write until {@link release}. Holding twice is holding once. */
  hold(): void {
    this.held ??= [];
  }

  /** Writes what was held, in the order it was written, and writes through again. */
  release(): void {
    const held = this.held;
    this.held = undefined;
    for (const write of held ?? []) (write.stream.write as (...args: unknown[]) => boolean)(...write.args);
  }

  /** A stream like `stream` (every property read from it) whose `write` is held while holding. */
  private wrap(stream: NodeJS.WritableStream): NodeJS.WritableStream {
    const wrapped = Object.create(stream) as NodeJS.WritableStream;
    wrapped.write = ((...args: unknown[]) => {
      if (this.held === undefined) return (stream.write as (...args: unknown[]) => boolean)(...args);
      this.held.push({ stream, args });
      return true;
    }) as NodeJS.WritableStream['write'];
    return wrapped;
  }
}
