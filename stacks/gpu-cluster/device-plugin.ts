// The NVIDIA device plugin: advertises each node's GPUs as the `nvidia.com/gpu` resource pods ask for.
import * as k8s from '@pulumi/kubernetes';
import type * as pulumi from '@pulumi/pulumi';
import { GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';

export const DEVICE_PLUGIN_IMAGE = 'nvcr.io/nvidia/k8s-device-plugin:v0.17.0';

/** The upstream static manifest, limited to Kiln's GPU nodes (the EKS GPU AMI brings the driver). */
export function nvidiaDevicePlugin(name: string, opts: pulumi.CustomResourceOptions): k8s.apps.v1.DaemonSet {
  const labels = { 'app.kubernetes.io/name': 'nvidia-device-plugin' };
  const pluginDir = '/var/lib/kubelet/device-plugins';
  return new k8s.apps.v1.DaemonSet(name, {
    metadata: { name: 'nvidia-device-plugin', namespace: 'kube-system', labels },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: { type: 'RollingUpdate' },
      template: {
        metadata: { labels },
        spec: {
          priorityClassName: 'system-node-critical',
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: GPU_TYPE_LABEL, operator: 'Exists' }] }],
              },
            },
          },
          tolerations: [{ key: GPU_TAINT.key, operator: 'Exists', effect: GPU_TAINT.effect }],
          containers: [{
            name: 'nvidia-device-plugin',
            image: DEVICE_PLUGIN_IMAGE,
            // A node whose driver is still loading retries instead of crash-looping.
            env: [{ name: 'FAIL_ON_INIT_ERROR', value: 'false' }],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
            volumeMounts: [{ name: 'device-plugins', mountPath: pluginDir }],
          }],
          volumes: [{ name: 'device-plugins', hostPath: { path: pluginDir } }],
        },
      },
    },
  }, opts);
}
