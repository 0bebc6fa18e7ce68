/**
 * The table of a project's listed entries (members, secrets): one column per heading, then
 * an actions column whose heading only screen readers hear, and a Remove button per row.
 */
import type { ComponentChildren } from 'preact';

/** A table with `headings` and an actions column; `children` are its `<tr>` rows. */
export function ItemTable({ headings, children }: { headings: string[]; children: ComponentChildren }) {
  return (
    <table>
      <thead>
        <tr>
          {headings.map((heading) => (
            <th key={heading} scope="col">
              {heading}
            </th>
          ))}
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** A row's Remove button (the cell of the actions column); `what` names the entry to screen readers. */
export function RemoveCell({ what, onRemove }: { what: string; onRemove: () => void }) {
  return (
    <td>
      <button type="button" class="secondary small" aria-label={`Remove ${what}`} onClick={onRemove}>
        Remove
      </button>
    </td>
  );
}
