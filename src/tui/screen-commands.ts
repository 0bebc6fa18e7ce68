/**
 * What the `/` commands and the pickers do on the screen: open a picker and load its items,
 * act on the chosen item (open a conversation, change model or agent, rewind), and run the
 * commands that need no picker (new, compact, fork, approvals, status, help, quit).
 */
import { resolveConversationId } from '../cli/conversation-reference.js';
import { helpText, parseSlashCommand, SLASH_COMMANDS } from './commands.js';
import { loadAgents, loadConversations, loadModels, rewindItems, type PickerState } from './pickers.js';
import type { TuiScreen } from './screen.js';

const TITLES: Record<PickerState['kind'], string> = { conversation: 'Resume a conversation', model: 'Model', agent: 'Agent', rewind: 'Rewind to before' };

/** Opens (or, for a new search, reloads) a picker of one kind. */
export function openPicker(screen: TuiScreen, kind: PickerState['kind'], query = ''): void {
  const previous = screen.picker?.kind === kind ? screen.picker : undefined;
  const picker: PickerState = previous ?? { kind, title: TITLES[kind], query, items: [], selected: 0, serverSearch: kind === 'conversation', loading: true };
  picker.loading = true;
  screen.picker = picker;
  if (kind === 'rewind') {
    picker.items = rewindItems(screen.controller.model);
    picker.loading = false;
    if (picker.items.length === 0) picker.error = 'no message of yours to rewind to yet (older ones: scroll up first)';
    screen.changed();
    return;
  }
  if (kind === 'conversation') screen.client.request('conversations/subscribe', {}).catch(() => undefined);
  const load = kind === 'conversation' ? loadConversations(screen.client, query) : kind === 'model' ? loadModels(screen.client) : loadAgents(screen.client);
  load.then(
    (items) => {
      // A later search may have answered first.
      if (screen.picker !== picker || picker.query !== query) return;
      picker.items = items;
      picker.loading = false;
      delete picker.error;
      screen.changed();
    },
    (error: unknown) => {
      picker.loading = false;
      picker.error = (error as Error).message;
      screen.changed();
    },
  );
  screen.changed();
}

/**
 * Acts on the item chosen in a picker, or named by a command's argument.
 * @param typed the `/command` typed, as the composer showed it: back in the composer if acting fails
 */
export function choosePicker(screen: TuiScreen, picker: PickerState, value: string, typed?: string): void {
  const controller = screen.controller;
  if (picker.kind === 'conversation') {
    screen.client.request('conversations/unsubscribe', {}).catch(() => undefined);
    screen.anchor = undefined;
    screen.attempt(async () => {
      await controller.open(value);
      screen.composer.seedHistory(userPrompts(screen));
    });
  } else if (picker.kind === 'model') {
    screen.attempt(async () => {
      await controller.setModel(value);
      screen.notify(`model: ${value}${controller.conversationId ? ' (from the next turn)' : ''}`);
    }, typed);
  } else if (picker.kind === 'agent') {
    screen.attempt(async () => {
      const deferred = await controller.setAgent(value);
      screen.notify(`agent: ${value}${deferred ? ' (after the running turn)' : ''}`);
    }, typed);
  } else {
    const [afterItemId, text] = value.split('\n', 2) as [string, string | undefined];
    screen.attempt(async () => {
      const dropped = await controller.rewind(afterItemId);
      screen.composer.clear();
      screen.composer.insert(text ?? '');
      screen.notify(`rewound: ${dropped} items dropped; your message is back in the composer`);
    });
  }
}

function userPrompts(screen: TuiScreen): string[] {
  return screen.controller.model.entries.flatMap((entry) => (entry.item?.kind === 'user_message' ? [entry.item.content.map((part) => (part.type === 'text' ? part.text : '')).join('')] : []));
}

/**
 * Runs a typed `/command`. Unknown commands say so and list the known ones. A command that
 * fails, or is unknown, comes back to the composer (when nothing was typed since) to be
 * corrected and run again.
 * @param typed the command as the composer showed it (pastes as placeholders); `text` by default
 */
export function runCommand(screen: TuiScreen, text: string, typed: string = text): void {
  const parsed = parseSlashCommand(text);
  const controller = screen.controller;
  const name = parsed?.name ?? '';
  const argument = parsed?.argument ?? '';
  switch (name) {
    case 'new':
      screen.anchor = undefined;
      screen.attempt(() => controller.startNew(), typed);
      return;
    case 'resume':
      // The same references as `openvaala tui --resume`: an id, a unique prefix of one, or `last`.
      if (argument) screen.attempt(async () => controller.open(await resolveConversationId(screen.client, argument)), typed);
      else openPicker(screen, 'conversation');
      return;
    case 'model':
      if (argument) choosePicker(screen, { kind: 'model' } as PickerState, argument, typed);
      else openPicker(screen, 'model');
      return;
    case 'agent':
      if (argument) choosePicker(screen, { kind: 'agent' } as PickerState, argument, typed);
      else openPicker(screen, 'agent');
      return;
    case 'rewind':
      openPicker(screen, 'rewind');
      return;
    case 'compact':
      screen.attempt(async () => {
        await controller.compact();
        screen.notify('compacting the history…');
      }, typed);
      return;
    case 'fork':
      screen.attempt(async () => {
        const source = controller.conversationId;
        const id = await controller.fork();
        screen.notify(`forked ${source} into ${id}; you are in the fork`);
      }, typed);
      return;
    case 'approvals':
      screen.attempt(async () => {
        if (argument === 'ask' || argument === 'allow') {
          controller.pending.approvalPolicy = { default: argument };
          screen.notify(`new conversations from this terminal: approvals default ${argument}${argument === 'ask' ? ' (every tool call is asked about)' : ''}; /new starts one`);
          return;
        }
        if (argument) throw new Error(`/approvals takes ask or allow, not "${argument}"`);
        const { policy, source } = await controller.approvalPolicy();
        const rules = policy?.rules.map((rule) => `  ${rule.tool}${rule.match ? ` ${JSON.stringify(rule.match)}` : ''} → ${rule.decision}`).join('\n');
        screen.notify(`approval policy of ${source}: default ${policy?.default ?? 'allow'}${rules ? `\n${rules}` : ''}\n/approvals ask|allow sets the default for new conversations`);
      }, typed);
      return;
    case 'status':
      screen.attempt(async () => {
        const status = await screen.client.request('server/status', {});
        const model = controller.model;
        const session = model.rootSession;
        const usage = model.usage;
        screen.notify(
          [
            `server: pid ${status.pid}, version ${status.version}, configuration ${status.configDir}${status.busy ? ', busy' : ''}`,
            model.conversation ? `conversation: ${model.conversation.id} "${model.conversation.title}" in ${model.conversation.workLocation.map((entry) => `${entry.executor}:${entry.cwd}`).join(', ')}` : `conversation: none yet (created by the first prompt in ${controller.pending.cwd})`,
            `model: ${session?.model ?? controller.pending.model ?? 'the default'} · agent: ${session?.agent ?? controller.pending.agent ?? 'the default'} · ${model.running ? 'running' : 'idle'}${session?.queuedInputs.length ? ` · ${session.queuedInputs.length} queued` : ''}`,
            usage ? `context: ${usage.contextTokens} tokens${usage.contextWindow ? ` of ${usage.contextWindow}` : ''} · last turn ${usage.inputTokens} in / ${usage.outputTokens} out${usage.costUsd !== undefined ? ` · $${usage.costUsd.toFixed(4)}` : ''}` : 'context: no model call yet',
          ].join('\n'),
        );
      }, typed);
      return;
    case 'help':
      screen.notify(helpText());
      return;
    case 'quit':
    case 'exit':
      screen.exitRequested = true;
      screen.changed();
      return;
    default:
      screen.notify(`unknown command /${name}; the commands are ${SLASH_COMMANDS.map((command) => `/${command.name}`).join(' ')} (send a message starting with / as //…)${screen.giveBack(typed)}`, 'error');
  }
}
