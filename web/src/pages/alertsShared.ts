// What the alert and budget pages share: the organization's deployments (a rule may watch one) and labels.
import { api, currentOrgId, ok } from '../api.ts';

export async function deploymentChoices(): Promise<{ value: string; label: string }[]> {
  const page = await ok(api.GET('/v1/deployments', { params: { query: { orgId: currentOrgId(), limit: 100 } } }));
  return page.data.map((d) => ({ value: d.id, label: d.name }));
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
export const usd = (cents: number) => (cents / 100).toLocaleString(undefined, { style: 'currency', currency: 'USD' });
