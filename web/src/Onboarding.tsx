// The getting-started checklist on Home: each onboarding step, done (as the organization's records show),
// skipped or to do, with a link to where it is done; a step can be skipped, the list dismissed or restarted.
// Shown until every step is done or skipped, or it is dismissed; then a single line offers it again.
import { Link } from 'react-router';
import { api, currentOrgId, ok, type Schemas } from './api.ts';
import { ErrorBanner, LoadingBlock, useApi, useSubmit } from './ui/index.ts';

type Step = Schemas['OnboardingStep'];

/** Where in the dashboard each step is done. */
const WHERE: Readonly<Record<Step['id'], { to: string; label: string }>> = {
  verify_email: { to: '/settings/general', label: 'Open your profile' },
  create_api_key: { to: '/settings/api-keys', label: 'Create a key' },
  choose_provider: { to: '/deployments/new', label: 'Choose at deployment' },
  first_deployment_running: { to: '/deployments/new', label: 'Deploy a model' },
  first_inference: { to: '/deployments', label: 'Open your deployments' },
  invite_teammate: { to: '/team', label: 'Invite someone' },
  set_budget: { to: '/budgets', label: 'Set a budget' },
};

export function OnboardingChecklist() {
  const query = { orgId: currentOrgId() };
  const data = useApi(async () => {
    const [progress, steps] = await Promise.all([
      ok(api.GET('/v1/onboarding', { params: { query } })),
      ok(api.GET('/v1/onboarding/steps', { params: { query } })),
    ]);
    return { progress, steps };
  }, []);
  const { busy, error, run } = useSubmit();

  const act = (call: () => Promise<unknown>) => run(async () => {
    await call();
    data.reload();
  });
  const setOnboarding = (action: 'dismiss' | 'restart') => act(() => ok(api.POST('/v1/onboarding', { body: { action } })));
  const skip = (step: Step, action: 'skip' | 'unskip') => act(() => ok(api.POST('/v1/onboarding/steps', { body: { step: step.id, action } })));

  if (data.error) return <ErrorBanner error={data.error} onRetry={data.reload} />;
  if (!data.data) {
    return (
      <section className="card" aria-label="Getting started">
        <LoadingBlock lines={5} label="Loading your checklist" />
      </section>
    );
  }
  const { progress, steps } = data.data;
  if (progress.dismissed || progress.complete) {
    return (
      <p className="muted">
        {progress.complete ? 'You have been through every getting-started step.' : 'You dismissed the getting-started checklist.'}{' '}
        <button type="button" className="button button-quiet" disabled={busy} onClick={() => void setOnboarding('restart')}>
          Show the checklist again
        </button>
      </p>
    );
  }
  return (
    <section className="card" aria-labelledby="onboarding-title">
      <div className="page-header">
        <div>
          <h2 id="onboarding-title">Getting started</h2>
          <p className="muted" id="onboarding-progress">
            {progress.done} of {progress.total} done{progress.skipped ? `, ${progress.skipped} skipped` : ''}
          </p>
        </div>
        <button type="button" className="button button-quiet" disabled={busy} onClick={() => void setOnboarding('dismiss')}>
          Dismiss
        </button>
      </div>
      <progress className="progress" max={progress.total} value={progress.done + progress.skipped} aria-labelledby="onboarding-progress" />
      <ErrorBanner error={error} />
      <ol className="checklist" aria-label="Getting-started steps">
        {steps.map((step) => (
          <li key={step.id} className={`checklist-item checklist-${step.status}`} data-step={step.id}>
            <span className="checklist-mark" aria-hidden="true">
              {step.status === 'done' ? '✓' : step.status === 'skipped' ? '–' : ''}
            </span>
            <div className="grow">
              <strong>{step.title}</strong>{' '}
              <span className="visually-hidden">({step.status === 'todo' ? 'to do' : step.status})</span>
              <span className="muted small block">{step.status === 'skipped' ? 'Skipped. ' : ''}{step.description}</span>
            </div>
            {step.status === 'done' && <span className="badge badge-success">Done</span>}
            {step.status === 'todo' && (
              <>
                <Link className="button" to={WHERE[step.id].to}>
                  {WHERE[step.id].label}
                </Link>
                <button type="button" className="button button-quiet" disabled={busy} onClick={() => void skip(step, 'skip')} aria-label={`Skip “${step.title}”`}>
                  Skip
                </button>
              </>
            )}
            {step.status === 'skipped' && (
              <button type="button" className="button button-quiet" disabled={busy} onClick={() => void skip(step, 'unskip')} aria-label={`Bring back “${step.title}”`}>
                Undo skip
              </button>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
