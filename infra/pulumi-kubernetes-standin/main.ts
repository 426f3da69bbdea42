// Kiln's STAND-IN for the Pulumi Kubernetes resource provider plugin (`pulumi-resource-kubernetes`), used
// only where the real plugin cannot be installed: Kiln's stacks keep the real @pulumi/kubernetes SDK and the
// real Pulumi engine keeps state, diff, preview, refresh and destroy; this process answers the engine's
// provider calls for plain Kubernetes objects, behaving as the real provider 4.x does in server-side apply
// mode (see README.md here for what it covers and what it leaves out). `npm run tools` installs it as the
// `kubernetes` resource plugin unless the real one is installed.
//
// Plugin protocol: the engine starts the plugin with its own address as the argument; the plugin serves
// gRPC on a port and prints that port, and nothing else, on stdout. Logs go to stderr.
import { serveProvider } from './grpc-server.ts';
import { KubernetesProvider } from './provider.ts';
import { KUBERNETES_PROVIDER_VERSION } from '../tools/versions.ts';

const log = (line: string) => process.stderr.write(`kiln kubernetes stand-in: ${line}\n`);

const { port, server } = await serveProvider({ provider: new KubernetesProvider(), version: KUBERNETES_PROVIDER_VERSION, log });
process.stdout.write(`${port}\n`);

// The engine ends a plugin by killing it; stop cleanly on the polite signals too.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.tryShutdown(() => process.exit(0)));
