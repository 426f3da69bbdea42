// Where a deployment's model server answers on its cluster: the labels the vllm-deployment stack gives its
// pods and Service, the port, and the Service's in-cluster URL. The stack makes them; the worker (readiness,
// the stopped deployment's Service URL) and the API's inference gateway find the pods by them.

/** Port of vLLM's OpenAI-compatible server (its default), under the container port name below. */
export const VLLM_PORT = 8000;
export const VLLM_PORT_NAME = 'http';

/** Every vLLM pod carries this label; its selector finds all of a namespace's model servers. */
export const VLLM_APP_LABEL = { key: 'app.kubernetes.io/name', value: 'vllm' } as const;
export const VLLM_PODS_SELECTOR = `${VLLM_APP_LABEL.key}=${VLLM_APP_LABEL.value}`;
/** Names the deployment a pod serves (its name, unique in the organization's namespace). */
export const DEPLOYMENT_LABEL = 'app.kubernetes.io/instance';

/** The labels of a deployment's pods, Deployment and Service; the Service selects the pods by them. */
export function modelServerLabels(deployment: string): Record<string, string> {
  return { [VLLM_APP_LABEL.key]: VLLM_APP_LABEL.value, [DEPLOYMENT_LABEL]: deployment };
}

/** The in-cluster URL of a deployment's Service (named after the deployment), e.g. `http://llama.models.svc.cluster.local`. */
export function serviceUrl(service: string, namespace: string): string {
  return `http://${service}.${namespace}.svc.cluster.local`;
}
