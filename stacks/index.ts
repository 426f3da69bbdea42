// Entry for `pulumi up` from the root Pulumi.yaml: stack config picks the component (`kiln:component`) and
// gives its arguments under the same names as the component's args (see docs/operating/pulumi-stacks.md).
import * as pulumi from '@pulumi/pulumi';
import type { NodeGroup } from '../catalog/node-groups.ts';
import { GpuCluster } from './gpu-cluster/index.ts';
import { KilnOnKubernetes, type KilnOnKubernetesArgs } from './kiln-on-kubernetes/index.ts';
import { VllmDeployment } from './vllm-deployment/index.ts';

// Not exported: Pulumi refuses an entry module with both a default export and named exports.
const COMPONENTS = ['vllm-deployment', 'gpu-cluster', 'kiln-on-kubernetes'] as const;

export default function program(): Record<string, pulumi.Output<unknown>> {
  const config = new pulumi.Config('kiln');
  const component = config.require('component');
  // One stack per deployment or cluster, so its name is the natural default.
  const name = config.get('name') ?? pulumi.getStack();
  if (component === 'vllm-deployment') {
    const deployment = new VllmDeployment(name, {
      name,
      namespace: config.get('namespace'),
      model: config.require('model'),
      gpuType: config.require('gpuType'),
      gpusPerReplica: config.getNumber('gpusPerReplica') ?? 1,
      replicas: config.getNumber('replicas') ?? 1,
      minReplicas: config.getNumber('minReplicas'),
      maxReplicas: config.getNumber('maxReplicas'),
      maxModelLen: config.getNumber('maxModelLen'),
      dtype: config.get('dtype'),
      extraArgs: config.getObject<string[]>('extraArgs'),
      image: config.get('image'),
      modelCacheSize: config.get('modelCacheSize'),
      horizontalPodAutoscaler: config.getBoolean('horizontalPodAutoscaler'),
    });
    return { serviceUrl: deployment.serviceUrl, deploymentName: deployment.deploymentName, serviceName: deployment.serviceName };
  }
  if (component === 'gpu-cluster') {
    const cluster = new GpuCluster(name, {
      subnetIds: config.requireObject<string[]>('subnetIds'),
      nodeGroups: config.requireObject<NodeGroup[]>('nodeGroups'),
      kubernetesVersion: config.get('kubernetesVersion'),
      nodeDiskSizeGb: config.getNumber('nodeDiskSizeGb'),
    });
    return { kubeconfig: cluster.kubeconfig, clusterName: cluster.clusterName, nodeGroupNames: cluster.nodeGroupNames };
  }
  if (component === 'kiln-on-kubernetes') {
    // Secrets are set with `pulumi config set --secret` and read as secrets, so the state keeps them encrypted.
    // Which ones are set is read in clear: it decides the objects before any value is known.
    const optionalSecret = (key: string) => (config.get(key) === undefined ? undefined : config.requireSecret(key));
    const secretEnv = Object.entries(config.getObject<Record<string, string>>('secretEnv') ?? {}).map(([key, value]) => [key, pulumi.secret(value)]);
    const kiln = new KilnOnKubernetes(name, {
      image: config.require('image'),
      namespace: config.get('namespace'),
      replicas: config.requireObject<KilnOnKubernetesArgs['replicas']>('replicas'),
      environment: config.get<'production' | 'development'>('environment'),
      databaseUrl: config.requireSecret('databaseUrl'),
      temporalAddress: config.require('temporalAddress'),
      signingKey: config.requireSecret('signingKey'),
      pulumiPassphrase: config.requireSecret('pulumiPassphrase'),
      metricsToken: optionalSecret('metricsToken'),
      smtpUrl: optionalSecret('smtpUrl'),
      env: config.getObject<Record<string, string>>('env'),
      secretEnv: Object.fromEntries(secretEnv),
    });
    return { apiUrl: kiln.apiUrl, gatewayUrl: kiln.gatewayUrl, apiServiceName: kiln.apiServiceName, gatewayServiceName: kiln.gatewayServiceName, secretName: kiln.secretName };
  }
  throw new Error(`kiln:component must be one of ${COMPONENTS.join(', ')}; got "${component}"`);
}
