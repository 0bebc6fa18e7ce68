/**
 * A tool call waiting for approval: the command or the diff it would apply, why it is asked,
 * and the server's options in its order (docs/protocol.md, "Approvals"). Answered with
 * `approval/respond` from any tab; the card disappears everywhere on `approval/resolved`.
 * Bidirectional overrides in what is to be approved are shown as code points, so a command
 * cannot read as another one.
 */
import { useState } from 'preact/hooks';
import { showBidiControls } from '../../bidi-controls.js';
import type { ApprovalRequest } from '../../protocol/entities.js';
import { DiffView } from './diff-view.js';

/** One approval request, with buttons for its options. */
export function ApprovalCard({ approval, respond }: { approval: ApprovalRequest; respond: (decision: ApprovalRequest['options'][number]) => Promise<void> }) {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const details = approval.details;
  const answer = (option: ApprovalRequest['options'][number]) => {
    setBusy(true);
    respond(option).then(
      () => setBusy(false),
      (failure: unknown) => {
        setBusy(false);
        setError(failure instanceof Error ? failure.message : String(failure));
      },
    );
  };
  return (
    <section class="approval" role="alertdialog" aria-label={`Approval needed for ${approval.toolName}`} data-approval-id={approval.approvalId}>
      <h3>
        Approve <code>{approval.toolName}</code>?
      </h3>
      <p class="muted">{approval.reason}</p>
      {details?.kind === 'command' ? (
        <pre class="command-line">
          <span class="muted">{showBidiControls(details.cwd)} $ </span>
          {showBidiControls(details.command)}
        </pre>
      ) : details?.kind === 'fileChange' ? (
        details.changes.map((change) => <DiffView key={change.path} change={change} />)
      ) : (
        <pre class="tool-arguments">{showBidiControls(JSON.stringify(approval.arguments, null, 2))}</pre>
      )}
      <div class="approval-options">
        {approval.options.map((option, index) => (
          <button
            key={option.decision}
            type="button"
            class={option.decision.startsWith('deny') ? 'danger' : index === 0 ? '' : 'secondary'}
            disabled={busy}
            data-decision={option.decision}
            onClick={() => answer(option)}
            aria-keyshortcuts={index === 0 ? 'Control+Shift+Y' : option.decision === 'deny' ? 'Control+Shift+N' : undefined}
          >
            {option.label}
          </button>
        ))}
      </div>
      {error ? <p role="alert" class="error-text">{error}</p> : null}
    </section>
  );
}
