/**
 * The `<option>` lists of the catalog's pickers (executors from `executors/list`, models from
 * `models/list`), shown alike on every form that picks one. The caller's `<select>` holds them
 * after any option of its own (such as "(server default)").
 */
import type { ModelInfo } from '../../protocol/methods.js';
import type { Catalog } from '../state/app-state.js';

/** One option per executor, labelled `name (kind)`. */
export function ExecutorOptions({ executors }: { executors: Catalog['executors'] }) {
  return (
    <>
      {executors.map((entry) => (
        <option key={entry.name} value={entry.name}>
          {entry.name} ({entry.kind})
        </option>
      ))}
    </>
  );
}

/** One option per model, labelled `display name (id)`. */
export function ModelOptions({ models }: { models: ModelInfo[] }) {
  return (
    <>
      {models.map((model) => (
        <option key={model.id} value={model.id}>
          {model.displayName} ({model.id})
        </option>
      ))}
    </>
  );
}
