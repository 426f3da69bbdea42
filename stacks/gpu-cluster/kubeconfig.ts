// A kubeconfig for an EKS cluster that signs in through the AWS CLI, so it holds no long-lived secret.
import { stringify } from 'yaml';

export interface EksEndpoint {
  readonly name: string;
  readonly endpoint: string;
  /** Base64 PEM of the cluster's certificate authority. */
  readonly certificateAuthority: string;
  readonly region: string;
}

export function eksKubeconfig(cluster: EksEndpoint): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': cluster.name,
    clusters: [{ name: cluster.name, cluster: { server: cluster.endpoint, 'certificate-authority-data': cluster.certificateAuthority } }],
    contexts: [{ name: cluster.name, context: { cluster: cluster.name, user: cluster.name } }],
    users: [{
      name: cluster.name,
      user: {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1beta1',
          command: 'aws',
          args: ['eks', 'get-token', '--cluster-name', cluster.name, '--region', cluster.region, '--output', 'json'],
        },
      },
    }],
  });
}
