// Administration, Clusters: the GPU clusters deployments are placed on, with their status and the GPUs each
// offers and its deployments hold; register an existing Kubernetes cluster by kubeconfig or have Kiln provision one on AWS; change
// one (name, kubeconfig, gateway, node group sizes, a local cluster's node pools: added, resized, removed); remove one after confirming (Kiln forgets a registered
// cluster, tears down one it provisioned; refused while deployments run on it).
import { useState } from 'react';
import { api, currentOrgId, ok, type Schemas } from '../../api.ts';
import {
  ConfirmDialog, DataTable, EmptyState, ErrorBanner, Field, FieldFrame, PageHeader, SelectField, StatusBadge, SubmitButton, useApi, useSubmit, useToast,
  type Column,
} from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Cluster = Schemas['GpuCluster'];
type NodeGroup = Schemas['ClusterNodeGroup'];
type NodePool = Schemas['ClusterNodePool'];
type GpuTypeId = NodeGroup['gpuType'];
/** The providers this form creates; a `local` cluster is registered through the API (npm start does it). */
type Provider = Exclude<Cluster['provider'], 'local'>;

const TONE: Record<Cluster['status'], 'ok' | 'busy' | 'idle' | 'bad'> = {
  ready: 'ok', provisioning: 'busy', scaling: 'busy', deleting: 'busy', failed: 'bad', deleted: 'idle',
};
/** GPU types a node group may hold (ClusterNodeGroup's enum), in the catalog's order. */
const GPU_TYPE_IDS: readonly GpuTypeId[] = ['nvidia-h100-80gb', 'nvidia-a100-80gb', 'nvidia-a10g', 'nvidia-l4', 'nvidia-t4'];

/** A field's error, or the first of its items' (subnetIds.1, nodeGroups.0.maxSize). */
function errorAt(fields: Record<string, string>, name: string): string | undefined {
  if (fields[name]) return fields[name];
  const item = Object.keys(fields).find((f) => f.startsWith(`${name}.`));
  return item ? `${item.slice(name.length + 1)}: ${fields[item]}` : undefined;
}
/** Lines (or commas, spaces) of a textarea as a list. */
const listOf = (value: FormDataEntryValue | null) => String(value ?? '').split(/[\s,]+/).filter(Boolean);
const sizeOf = (value: FormDataEntryValue | null) => Number(String(value ?? '').trim() || Number.NaN);

export default function AdminClusters() {
  return <AdminOnly title="Clusters"><Clusters /></AdminOnly>;
}

function Clusters() {
  const toast = useToast();
  const clusters = useApi(() => ok(api.GET('/v1/admin/clusters')), []);
  const gpuTypes = useApi(() => ok(api.GET('/v1/gpu-types', { params: { query: { orgId: currentOrgId() } } })).catch(() => []), []);
  const gpuName = (id: string) => gpuTypes.data?.find((g) => g.id === id)?.name ?? id;
  const [removing, setRemoving] = useState<Cluster>();
  const [editing, setEditing] = useState<Cluster>();

  const columns: Column<Cluster>[] = [
    {
      header: 'Cluster',
      cell: (c) => (
        <span className="stack-xs">
          <strong>{c.name}</strong>
          <code className="muted small">{c.id}</code>
        </span>
      ),
    },
    { header: 'Provider', cell: (c) => (c.provider === 'aws' ? `AWS${c.region ? ` ${c.region}` : ''}` : c.provider === 'local' ? 'Local (node pools)' : 'Kubernetes (registered)') },
    { header: 'For', cell: (c) => (c.organizationId ? <span className="stack-xs"><span>One organization</span><code className="muted small">{c.organizationId}</code></span> : 'Everyone') },
    {
      header: 'Status',
      cell: (c) => (
        <span className="stack-xs">
          <StatusBadge status={c.status} tone={TONE[c.status]} />
          {c.failureReason && <span className="small">{c.failureReason}</span>}
        </span>
      ),
    },
    {
      header: 'GPUs',
      cell: (c) => (c.gpus.length
        ? <span className="stack-xs">{c.gpus.map((g) => <span key={g.gpuType} style={{ whiteSpace: 'nowrap' }}>{gpuName(g.gpuType)}: {g.inUse} of {g.count} in use</span>)}</span>
        : <span className="muted">None yet</span>),
    },
    { header: 'Inference', cell: (c) => (c.gatewayUrl ? <span className="stack-xs"><span>Through a gateway</span><code className="small">{c.gatewayUrl}</code></span> : 'To the pods') },
    {
      header: 'Actions',
      cell: (c) => (
        <span className="row-actions">
          <button type="button" className="button" aria-label={`Change ${c.name}`} aria-expanded={editing?.id === c.id} onClick={() => setEditing(editing?.id === c.id ? undefined : c)}>Change</button>
          <button type="button" className="button button-danger-quiet" aria-label={`Remove ${c.name}`} onClick={() => setRemoving(c)}>Remove</button>
        </span>
      ),
    },
  ];
  const total = clusters.data?.reduce((n, c) => n + c.gpus.reduce((m, g) => m + g.count, 0), 0);
  const inUse = clusters.data?.reduce((n, c) => n + c.gpus.reduce((m, g) => m + g.inUse, 0), 0);

  return (
    <>
      <PageHeader title="Clusters" description="The GPU clusters deployments are placed on: shared by every organization, or an organization's own (connected during its onboarding)." />

      <section className="stack" aria-labelledby="clusters-title">
        <h2 id="clusters-title">Clusters{clusters.data && ` (${clusters.data.length}, ${inUse} of ${total} GPUs in use)`}</h2>
        <ErrorBanner error={clusters.error} onRetry={clusters.reload} />
        {!clusters.error && (
          <DataTable
            caption="GPU clusters"
            columns={columns}
            rows={clusters.data}
            rowKey={(c) => c.id}
            empty={<EmptyState title="No GPU clusters">Deployments cannot be placed until one is registered: add one below.</EmptyState>}
          />
        )}
      </section>

      {editing && (
        <ChangeCluster
          key={editing.id}
          cluster={editing}
          onDone={(saved) => {
            setEditing(undefined);
            if (saved) {
              toast(`Cluster ${saved.name} changed`);
              clusters.reload();
            }
          }}
        />
      )}

      <NewCluster onCreated={(c) => { toast(c.status === 'ready' ? `Cluster ${c.name} registered: ${c.gpus.reduce((n, g) => n + g.count, 0)} GPUs` : `Cluster ${c.name} is being provisioned`); clusters.reload(); }} />

      <ConfirmDialog
        open={!!removing}
        title={`Remove the cluster ${removing?.name ?? ''}?`}
        confirmLabel="Remove cluster"
        onClose={() => setRemoving(undefined)}
        onConfirm={async () => {
          if (!removing) return;
          const gone = await ok(api.DELETE('/v1/admin/clusters/{id}', { params: { path: { id: removing.id } } }));
          toast(gone.status === 'deleting' ? `Cluster ${gone.name} is being torn down` : `Cluster ${gone.name} removed`);
          if (editing?.id === removing.id) setEditing(undefined);
          clusters.reload();
        }}
      >
        <p>
          {removing?.provider === 'aws'
            ? 'Kiln tears the cluster down on AWS (its nodes and everything on them).'
            : removing?.provider === 'local'
              ? 'Kiln removes the GPU nodes of the cluster\'s node pools (and everything on them).'
              : 'Kiln forgets the cluster and its kubeconfig; the cluster itself is left as it is.'}
          {' '}No deployment is placed on it again. Kiln refuses while deployments still run on it.
        </p>
      </ConfirmDialog>
    </>
  );
}

function NewCluster({ onCreated }: { onCreated(cluster: Cluster): void }) {
  const [provider, setProvider] = useState<Provider>('kubernetes');
  const [groups, setGroups] = useState(1);
  const { busy, error, fields, onSubmit } = useSubmit();

  const create = onSubmit(async (form, formElement) => {
    const name = String(form.get('name') ?? '').trim();
    const gatewayUrl = String(form.get('gatewayUrl') ?? '').trim() || undefined;
    const body: Schemas['CreateClusterRequest'] = provider === 'kubernetes'
      ? { provider, name, kubeconfig: String(form.get('kubeconfig') ?? ''), gatewayUrl }
      : {
        provider, name, gatewayUrl,
        region: String(form.get('region') ?? '').trim(),
        subnetIds: listOf(form.get('subnetIds')),
        kubernetesVersion: String(form.get('kubernetesVersion') ?? '').trim() || undefined,
        nodeGroups: Array.from({ length: groups }, (_, i) => ({
          gpuType: String(form.get(`gpuType-${i}`)) as GpuTypeId,
          minSize: sizeOf(form.get(`minSize-${i}`)), desiredSize: sizeOf(form.get(`desiredSize-${i}`)), maxSize: sizeOf(form.get(`maxSize-${i}`)),
        })),
      };
    const cluster = await ok(api.POST('/v1/admin/clusters', { body }));
    formElement.reset();
    setGroups(1);
    onCreated(cluster);
  });

  return (
    <section className="card" aria-labelledby="new-cluster-title">
      <h2 id="new-cluster-title">Add a cluster</h2>
      <form className="stack" noValidate onSubmit={create}>
        <ErrorBanner error={error} />
        <fieldset className="radio-group">
          <legend>How</legend>
          <label className="radio-option">
            <input type="radio" name="provider" value="kubernetes" checked={provider === 'kubernetes'} onChange={() => setProvider('kubernetes')} />
            <span><strong>Register a Kubernetes cluster</strong><span className="muted small block">One that exists, reached with its kubeconfig; Kiln reads the GPUs its nodes offer.</span></span>
          </label>
          <label className="radio-option">
            <input type="radio" name="provider" value="aws" checked={provider === 'aws'} onChange={() => setProvider('aws')} />
            <span><strong>Provision on AWS (EKS)</strong><span className="muted small block">Kiln creates the cluster and its GPU node groups in your subnets.</span></span>
          </label>
        </fieldset>
        {fields.provider && <p className="field-error">{fields.provider}</p>}
        <Field label="Name" name="name" required maxLength={63} hint="Lower-case letters, digits and hyphens, e.g. gpu-east." error={fields.name} />
        {provider === 'kubernetes' ? (
          <FieldFrame label="Kubeconfig" hint="YAML whose current context reaches the cluster with a bearer token or a client certificate. Stored encrypted, never shown again." error={fields.kubeconfig}>
            {(control) => <textarea {...control} name="kubeconfig" required rows={8} className="code-input" spellCheck={false} autoComplete="off" />}
          </FieldFrame>
        ) : (
          <>
            <div className="form-row">
              <Field label="Region" name="region" required placeholder="us-east-1" error={fields.region} />
              <Field label="Kubernetes version" name="kubernetesVersion" placeholder="1.33" hint="Empty: EKS's default." error={fields.kubernetesVersion} />
            </div>
            <FieldFrame label="Subnet ids" hint="Two or more, one a line (or separated by commas)." error={errorAt(fields, 'subnetIds')}>
              {(control) => <textarea {...control} name="subnetIds" required rows={3} className="code-input" spellCheck={false} placeholder={'subnet-0123abcd\nsubnet-4567ef01'} />}
            </FieldFrame>
            <fieldset className="plain-fieldset stack-s">
              <legend><strong>Node groups</strong></legend>
              {errorAt(fields, 'nodeGroups') && <p className="field-error">{errorAt(fields, 'nodeGroups')}</p>}
              {Array.from({ length: groups }, (_, i) => (
                <NodeGroupRow key={i} index={i} fields={fields} />
              ))}
              <div className="row">
                <button type="button" className="button" onClick={() => setGroups((n) => Math.min(n + 1, GPU_TYPE_IDS.length))} disabled={groups >= GPU_TYPE_IDS.length}>Add a node group</button>
                {groups > 1 && <button type="button" className="button button-quiet" onClick={() => setGroups((n) => n - 1)}>Remove the last node group</button>}
              </div>
            </fieldset>
          </>
        )}
        <Field label="Inference gateway URL" name="gatewayUrl" type="url" placeholder="https://inference-gateway.gpu-east.example.com" hint="Only for a cluster whose pod network Kiln cannot reach; empty: Kiln calls the pods." error={fields.gatewayUrl} />
        <div><SubmitButton busy={busy} busyLabel={provider === 'kubernetes' ? 'Registering…' : 'Starting…'}>{provider === 'kubernetes' ? 'Register cluster' : 'Provision cluster'}</SubmitButton></div>
      </form>
    </section>
  );
}

/** One node group's GPU type and sizes; its fields are named by index (gpuType-0), its errors nodeGroups.0.*. */
function NodeGroupRow({ index, fields, value }: { index: number; fields: Record<string, string>; value?: NodeGroup }) {
  const at = (name: string) => fields[`nodeGroups.${index}.${name}`];
  const group = `Group ${index + 1}${value ? ` (${value.gpuType})` : ''}`;
  return (
    <div className="form-row">
      {value
        ? <input type="hidden" name={`gpuType-${index}`} value={value.gpuType} />
        : <SelectField label={`${group}: GPU type`} name={`gpuType-${index}`} options={GPU_TYPE_IDS.map((g) => ({ value: g, label: g }))} defaultValue={GPU_TYPE_IDS[index]} error={at('gpuType')} />}
      <Field label={`${group}: minimum nodes`} name={`minSize-${index}`} type="number" min={0} max={1000} inputMode="numeric" required defaultValue={value?.minSize ?? 0} error={at('minSize')} />
      <Field label={`${group}: desired nodes`} name={`desiredSize-${index}`} type="number" min={0} max={1000} inputMode="numeric" required defaultValue={value?.desiredSize ?? 1} error={at('desiredSize')} />
      <Field label={`${group}: maximum nodes`} name={`maxSize-${index}`} type="number" min={1} max={1000} inputMode="numeric" required defaultValue={value?.maxSize ?? 2} error={at('maxSize')} />
    </div>
  );
}

/**
 * A local cluster's node pools: each one's sizes, a pool added (its name, GPU type and GPUs per node chosen once)
 * or removed. Fields are named by row (pool-min-0), errors nodePools.0.*; saving is one `pulumi up` of the cluster.
 */
function NodePoolRows({ pools, setPools, fields }: { pools: (NodePool & { existing: boolean })[]; setPools(next: (NodePool & { existing: boolean })[]): void; fields: Record<string, string> }) {
  const at = (i: number, name: string) => fields[`nodePools.${i}.${name}`];
  const change = (i: number, patch: Partial<NodePool>) => setPools(pools.map((p, j) => (j === i ? { ...p, ...patch } : p)));
  const number = (value: string) => (value.trim() === '' ? Number.NaN : Number(value));
  // What is wrong with the list or one pool's sizes together; a field's own error shows at the field.
  const general = fields.nodePools ?? Object.entries(fields).find(([field]) => /^nodePools\.\d+$/.test(field))?.[1];
  return (
    <fieldset className="plain-fieldset stack-s">
      <legend><strong>Node pools</strong></legend>
      {general && <p className="field-error">{general}</p>}
      {pools.map((pool, i) => {
        const label = `Pool ${pool.existing ? pool.name : i + 1}`;
        return (
          <div key={i} className="stack-xs">
            <div className="form-row">
              {!pool.existing && (
                <>
                  <Field label={`${label}: name`} name={`pool-name-${i}`} required maxLength={40} value={pool.name} onChange={(e) => change(i, { name: e.currentTarget.value.trim() })} error={at(i, 'name')} />
                  <SelectField label={`${label}: GPU type`} name={`pool-gpu-${i}`} options={GPU_TYPE_IDS.map((g) => ({ value: g, label: g }))} value={pool.gpuType} onChange={(e) => change(i, { gpuType: e.currentTarget.value })} error={at(i, 'gpuType')} />
                  <Field label={`${label}: GPUs per node`} name={`pool-gpus-${i}`} type="number" min={1} max={16} inputMode="numeric" required value={String(pool.gpusPerNode)} onChange={(e) => change(i, { gpusPerNode: number(e.currentTarget.value) })} error={at(i, 'gpusPerNode')} />
                </>
              )}
              <Field label={`${label}: minimum nodes`} name={`pool-min-${i}`} type="number" min={0} max={1000} inputMode="numeric" required value={String(pool.minSize)} onChange={(e) => change(i, { minSize: number(e.currentTarget.value) })} error={at(i, 'minSize')} />
              <Field label={`${label}: desired nodes`} name={`pool-desired-${i}`} type="number" min={0} max={1000} inputMode="numeric" required value={String(pool.desiredSize)} onChange={(e) => change(i, { desiredSize: number(e.currentTarget.value) })} error={at(i, 'desiredSize')} />
              <Field label={`${label}: maximum nodes`} name={`pool-max-${i}`} type="number" min={1} max={1000} inputMode="numeric" required value={String(pool.maxSize)} onChange={(e) => change(i, { maxSize: number(e.currentTarget.value) })} error={at(i, 'maxSize')} />
            </div>
            {pool.existing && <span className="muted small">{pool.gpuType}, {pool.gpusPerNode} GPU{pool.gpusPerNode === 1 ? '' : 's'} a node</span>}
            {pools.length > 1 && <div><button type="button" className="button button-quiet" onClick={() => setPools(pools.filter((_, j) => j !== i))}>Remove {label.toLowerCase()}</button></div>}
          </div>
        );
      })}
      <div><button type="button" className="button" onClick={() => setPools([...pools, { name: '', gpuType: 'nvidia-l4', gpusPerNode: 1, minSize: 0, desiredSize: 1, maxSize: 2, existing: false }])}>Add a node pool</button></div>
    </fieldset>
  );
}

/** PATCH: what the cluster's kind allows (a kubeconfig for a registered one, node group sizes for AWS, node pools for a local one). */
function ChangeCluster({ cluster, onDone }: { cluster: Cluster; onDone(saved?: Cluster): void }) {
  const { busy, error, fields, onSubmit } = useSubmit();
  const [pools, setPools] = useState(() => (cluster.nodePools ?? []).map((p) => ({ ...p, existing: true })));
  const save = onSubmit(async (form) => {
    const body: Schemas['UpdateClusterRequest'] = {};
    const name = String(form.get('name') ?? '').trim();
    if (name !== cluster.name) body.name = name;
    const kubeconfig = String(form.get('kubeconfig') ?? '');
    if (kubeconfig.trim()) body.kubeconfig = kubeconfig;
    const gatewayUrl = String(form.get('gatewayUrl') ?? '').trim();
    if (gatewayUrl !== (cluster.gatewayUrl ?? '')) body.gatewayUrl = gatewayUrl || null;
    if (cluster.nodePools) body.nodePools = pools.map(({ existing: _existing, ...pool }) => pool);
    if (cluster.nodeGroups) {
      body.nodeGroups = cluster.nodeGroups.map((g, i) => ({
        gpuType: g.gpuType, minSize: sizeOf(form.get(`minSize-${i}`)), desiredSize: sizeOf(form.get(`desiredSize-${i}`)), maxSize: sizeOf(form.get(`maxSize-${i}`)),
      }));
    }
    onDone(await ok(api.PATCH('/v1/admin/clusters/{id}', { params: { path: { id: cluster.id } }, body })));
  });
  return (
    <section className="card" aria-labelledby="change-cluster-title">
      <h2 id="change-cluster-title">Change {cluster.name}</h2>
      <form className="stack" noValidate onSubmit={save}>
        <ErrorBanner error={error} />
        <Field label="Name" name="name" required maxLength={63} defaultValue={cluster.name} error={fields.name} />
        {cluster.provider === 'kubernetes' && (
          <FieldFrame label="New kubeconfig" hint="Empty: keep the one stored. Either way Kiln reads the GPUs again." error={fields.kubeconfig}>
            {(control) => <textarea {...control} name="kubeconfig" rows={6} className="code-input" spellCheck={false} autoComplete="off" />}
          </FieldFrame>
        )}
        {cluster.nodeGroups?.map((g, i) => <NodeGroupRow key={g.gpuType} index={i} fields={fields} value={g} />)}
        {cluster.nodePools && <NodePoolRows pools={pools} setPools={setPools} fields={fields} />}
        <Field label="Inference gateway URL" name="gatewayUrl" type="url" defaultValue={cluster.gatewayUrl ?? ''} hint="Empty: Kiln calls the pods." error={fields.gatewayUrl} />
        <div className="row">
          <SubmitButton busy={busy} busyLabel="Saving…">Save changes</SubmitButton>
          <button type="button" className="button" onClick={() => onDone()}>Cancel</button>
        </div>
      </form>
    </section>
  );
}
