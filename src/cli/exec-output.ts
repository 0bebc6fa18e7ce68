/**
 * How `openvaala exec` shows a turn: the answer streamed as it is written, tool calls with a
 * short view of their output, errors on stderr — or, with `--json`, one event per line.
 */
import type { AnyNotification, Item } from '../protocol/index.js';

/** Where the renderer writes. */
export interface OutputStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const OUTPUT_PREVIEW_LINES = 12;

function summarizeArguments(toolName: string, args: unknown): string {
  if (args && typeof args === 'object') {
    const record = args as Record<string, unknown>;
    if (toolName === 'exec_command' && typeof record.command === 'string') return record.command;
    if (toolName === 'apply_patch' && typeof record.patch === 'string') {
      const files = [...record.patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((match) => match[1]);
      return files.join(', ');
    }
    if (typeof record.path === 'string') return record.path;
  }
  const text = JSON.stringify(args);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function preview(output: string): string {
  const lines = output.replace(/\n$/, '').split('\n');
  const shown = lines.slice(0, OUTPUT_PREVIEW_LINES).map((line) => `  │ ${line}`);
  if (lines.length > OUTPUT_PREVIEW_LINES) shown.push(`  │ … ${lines.length - OUTPUT_PREVIEW_LINES} more lines`);
  return shown.join('\n');
}

/**
 * Renders the events of one turn in human form. Text deltas go straight to stdout so the
 * answer appears as it is written; each tool call gets a header and an output preview.
 */
export class HumanRenderer {
  private midLine = false;

  constructor(private readonly streams: OutputStreams) {}

  /** Handles one event. */
  render(event: AnyNotification): void {
    switch (event.method) {
      case 'item/started':
        if (event.params.kind === 'tool_call') {
          const partial = event.params.partial as { toolName?: string; arguments?: unknown };
          this.line(`▸ ${partial.toolName} ${summarizeArguments(partial.toolName ?? '', partial.arguments)}`);
        }
        break;
      case 'item/delta':
        if (event.params.delta.text) {
          this.streams.stdout.write(event.params.delta.text);
          this.midLine = !event.params.delta.text.endsWith('\n');
        }
        break;
      case 'item/completed':
        this.completed(event.params.item);
        break;
      default:
        break;
    }
  }

  private completed(item: Item): void {
    if (item.kind === 'assistant_message' && this.midLine) {
      this.streams.stdout.write('\n');
      this.midLine = false;
    } else if (item.kind === 'tool_call') {
      const status = item.isError ? '✗' : '✓';
      const exit = item.exitCode !== undefined && item.exitCode !== null ? ` exit ${item.exitCode}` : '';
      if (item.output.trim()) this.line(preview(item.output));
      this.line(`  ${status} ${item.toolName}${exit} (${item.durationMs} ms)`);
    } else if (item.kind === 'model_error') {
      this.endLine();
      this.streams.stderr.write(`error: ${item.provider} model ${item.model}${item.httpStatus ? ` (HTTP ${item.httpStatus})` : ''}: ${item.message}${item.retries ? ` (after ${item.retries} retries)` : ''}\n`);
    } else if (item.kind === 'interruption') {
      this.line(`■ interrupted (${item.reason})${item.message ? `: ${item.message}` : ''}`);
    }
  }

  private endLine(): void {
    if (this.midLine) this.streams.stdout.write('\n');
    this.midLine = false;
  }

  private line(text: string): void {
    this.endLine();
    this.streams.stdout.write(`${text}\n`);
  }
}

/** Renders events as JSON Lines (`--json`): one `{ method, params }` object per line. */
export class JsonRenderer {
  constructor(private readonly streams: OutputStreams) {}

  /** Handles one event. */
  render(event: AnyNotification): void {
    this.streams.stdout.write(`${JSON.stringify(event)}\n`);
  }
}
