/** A plan (`update_plan`) as a checklist: done, in progress and pending steps. */
import type { PlanStep } from '../../protocol/plans.js';

const MARK: Record<PlanStep['status'], string> = { completed: '✓', in_progress: '◐', pending: '○' };

/** Renders the steps of a plan. */
export function PlanView({ steps, explanation }: { steps: readonly PlanStep[]; explanation?: string | undefined }) {
  const done = steps.filter((step) => step.status === 'completed').length;
  return (
    <div class="plan" role="group" aria-label={`Plan, ${done} of ${steps.length} steps done`}>
      <div class="plan-title">
        Plan <span class="muted">{done}/{steps.length}</span>
      </div>
      {explanation ? <p class="muted">{explanation}</p> : null}
      <ul class="plan-steps">
        {steps.map((step, index) => (
          <li key={index} class={`plan-step ${step.status}`}>
            <input type="checkbox" checked={step.status === 'completed'} disabled aria-label={`${step.step} (${step.status.replace('_', ' ')})`} />
            <span aria-hidden="true" class="plan-mark">
              {MARK[step.status]}
            </span>
            <span>{step.step}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
