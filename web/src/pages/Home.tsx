// The signed-in home: where to go first. Pages that exist are linked; the rest of the dashboard grows here.
import { Link } from 'react-router';
import { OnboardingChecklist } from '../Onboarding.tsx';
import { PageHeader } from '../ui/index.ts';

export default function Home() {
  return (
    <>
      <PageHeader title="Welcome to Kiln" description="Deploy open models on GPUs and call them through one API." />
      <OnboardingChecklist />
      <div className="cards">
        <section className="card">
          <h2>API keys</h2>
          <p className="muted">Create a key for the CLI, the SDK or your own code, with the scope it needs.</p>
          <Link className="button button-primary" to="/settings/api-keys">
            Manage API keys
          </Link>
        </section>
      </div>
    </>
  );
}
