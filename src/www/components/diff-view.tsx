/**
 * A file change as a unified or side-by-side diff, with line comments for a review: each
 * line's "comment" button opens a field, and saved comments join the conversation's review
 * draft (sent to the agent as one input).
 */
import { Fragment } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { showBidiControls } from '../../bidi-controls.js';
import type { FileChange } from '../../protocol/tool-details.js';
import type { ReviewDraft } from '../state/review.js';
import { parseUnifiedDiff, splitRows, type DiffLine } from './diff-parse.js';

/** How diffs are laid out (remembered in the browser). */
export type DiffLayout = 'unified' | 'split';

function storedLayout(): DiffLayout {
  return localStorage.getItem('openvaala.diffLayout') === 'split' ? 'split' : 'unified';
}

function CommentField({ onSave, onCancel, label }: { onSave: (text: string) => void; onCancel: () => void; label: string }) {
  const [text, setText] = useState('');
  return (
    <div class="diff-comment-field">
      <textarea aria-label={label} value={text} onInput={(event) => setText(event.currentTarget.value)} rows={2} autoFocus />
      <button type="button" onClick={() => onSave(text)} disabled={text.trim() === ''}>
        Add comment
      </button>
      <button type="button" class="secondary" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

function lineKey(line: DiffLine): string {
  return line.type === 'del' ? `old:${line.oldNumber}` : `new:${line.newNumber}`;
}

/** One file's diff. */
export function DiffView({ change, review }: { change: FileChange; review?: ReviewDraft }) {
  const [layout, setLayout] = useState<DiffLayout>(storedLayout);
  const [commenting, setCommenting] = useState<string | undefined>();
  const lines = useMemo(() => parseUnifiedDiff(change.unifiedDiff), [change.unifiedDiff]);
  const choose = (next: DiffLayout) => {
    localStorage.setItem('openvaala.diffLayout', next);
    setLayout(next);
  };
  const save = (line: DiffLine, text: string) => {
    review?.add({ path: change.movePath ?? change.path, line: (line.type === 'del' ? line.oldNumber : line.newNumber) ?? 0, side: line.type === 'del' ? 'old' : 'new', code: line.text, text });
    setCommenting(undefined);
  };
  const commentButton = (line: DiffLine | undefined) =>
    review && line && line.type !== 'hunk' && line.type !== 'meta' ? (
      <button type="button" class="diff-comment-button" aria-label={`Comment on line ${line.type === 'del' ? line.oldNumber : line.newNumber} of ${change.path}`} onClick={() => setCommenting(lineKey(line))}>
        +
      </button>
    ) : null;
  const field = (line: DiffLine | undefined) =>
    line && commenting === lineKey(line) ? <CommentField label={`Comment on line ${line.type === 'del' ? line.oldNumber : line.newNumber}`} onSave={(text) => save(line, text)} onCancel={() => setCommenting(undefined)} /> : null;
  return (
    <div class="diff" data-path={change.path}>
      <div class="diff-header">
        <span class={`diff-kind diff-kind-${change.kind}`}>{change.kind}</span>
        <span class="diff-path">{change.kind === 'move' ? `${change.path} → ${change.movePath ?? ''}` : change.path}</span>
        <span class="diff-layout" role="group" aria-label="Diff layout">
          <button type="button" aria-pressed={layout === 'unified'} onClick={() => choose('unified')}>
            Unified
          </button>
          <button type="button" aria-pressed={layout === 'split'} onClick={() => choose('split')}>
            Side by side
          </button>
        </span>
      </div>
      {layout === 'unified' ? (
        <table class="diff-table unified" role="table" aria-label={`Changes to ${change.path}`}>
          <tbody>
            {lines.map((line, index) => (
              <Fragment key={index}>
                <tr class={`diff-line ${line.type}`}>
                  <td class="number">{line.oldNumber ?? ''}</td>
                  <td class="number">{line.newNumber ?? ''}</td>
                  <td class="sign">{line.type === 'add' ? '+' : line.type === 'del' ? '-' : ''}</td>
                  <td class="code">
                    <span>{showBidiControls(line.text)}</span>
                    {commentButton(line)}
                  </td>
                </tr>
                {field(line) ? (
                  <tr>
                    <td colSpan={4}>{field(line)}</td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      ) : (
        <table class="diff-table split" role="table" aria-label={`Changes to ${change.path}, side by side`}>
          <tbody>
            {splitRows(lines).map((row, index) =>
              row.hunk ? (
                <tr key={index} class={`diff-line ${row.hunk.type}`}>
                  <td colSpan={4}>{row.hunk.text}</td>
                </tr>
              ) : (
                <Fragment key={index}>
                  <tr class="diff-line">
                    <td class="number">{row.left?.oldNumber ?? ''}</td>
                    <td class={`code ${row.left?.type ?? 'empty'}`}>
                      <span>{showBidiControls(row.left?.text ?? '')}</span>
                      {row.left?.type === 'del' ? commentButton(row.left) : null}
                    </td>
                    <td class="number">{row.right?.newNumber ?? ''}</td>
                    <td class={`code ${row.right?.type ?? 'empty'}`}>
                      <span>{showBidiControls(row.right?.text ?? '')}</span>
                      {commentButton(row.right)}
                    </td>
                  </tr>
                  {field(row.left) ?? field(row.right) ? (
                    <tr>
                      <td colSpan={4}>{field(row.left) ?? field(row.right)}</td>
                    </tr>
                  ) : null}
                </Fragment>
              ),
            )}
          </tbody>
        </table>
      )}
    </div>
  );
}
