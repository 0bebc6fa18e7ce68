/**
 * A modal confirmation (`<dialog>`): used before destructive actions (delete, rewind). The
 * promise resolves true when confirmed, false when cancelled or dismissed with Escape.
 */
import { render } from 'preact';

/** Asks the user to confirm; resolves with the answer. */
export function confirmAction(message: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = document.createElement('dialog');
    dialog.className = 'confirm-dialog';
    dialog.setAttribute('aria-label', 'Confirm');
    document.body.append(dialog);
    const finish = (answer: boolean) => {
      dialog.close();
      render(null, dialog);
      dialog.remove();
      resolve(answer);
    };
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      finish(false);
    });
    render(
      <form method="dialog" onSubmit={(event) => (event.preventDefault(), finish(true))}>
        <p>{message}</p>
        <div class="dialog-buttons">
          <button type="button" class="secondary" onClick={() => finish(false)}>
            Cancel
          </button>
          <button type="submit" class="danger" autoFocus>
            {confirmLabel}
          </button>
        </div>
      </form>,
      dialog,
    );
    dialog.showModal();
  });
}

/** Asks for a line of text (e.g. a new title); resolves undefined when cancelled. */
export function promptText(message: string, initial: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const dialog = document.createElement('dialog');
    dialog.className = 'confirm-dialog';
    document.body.append(dialog);
    let value = initial;
    const finish = (answer: string | undefined) => {
      dialog.close();
      render(null, dialog);
      dialog.remove();
      resolve(answer);
    };
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      finish(undefined);
    });
    render(
      <form method="dialog" onSubmit={(event) => (event.preventDefault(), finish(value.trim() || undefined))}>
        <label>
          {message}
          <input type="text" value={initial} onInput={(event) => (value = event.currentTarget.value)} autoFocus />
        </label>
        <div class="dialog-buttons">
          <button type="button" class="secondary" onClick={() => finish(undefined)}>
            Cancel
          </button>
          <button type="submit">Save</button>
        </div>
      </form>,
      dialog,
    );
    dialog.showModal();
  });
}
