// The one place where the versions of Kiln's external tools are pinned, with how each is built.
//
// The Go programs (TOOLS) are looked up in this order (docs/development/tools.md): on PATH at this version, the cache, a build from
// Go modules when `go` is present, else the official release download. The Pulumi CLI must match the
// @pulumi/pulumi package and the Kubernetes provider plugin the @pulumi/kubernetes package (test/tools checks both).

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface GoBuild {
  /** Module holding the main packages, fetched from the Go module proxy at the tool's version. */
  readonly module: string;
  /** Main packages to build, all in one `go build` so they share compiled dependencies. */
  readonly packages: readonly string[];
  /**
   * How to build. `install`: `go install pkg@version` works as is. `wrapper`: a generated module requires
   * `module` and repeats its replace directives: non-local ones as they are, local ones through
   * `localReplace` (which returns the published version to use, or undefined to drop the line).
   */
  readonly mode: 'install' | 'wrapper';
  readonly localReplace?: (modulePath: string) => string | undefined;
  /** `-X` linker flags, `importpath.name=value`. */
  readonly ldflags?: readonly string[];
  /** Binaries whose default name (the package path's last element) is not the tool's name. */
  readonly rename?: Readonly<Record<string, string>>;
  /** The module's version when it is not the release's (Prometheus publishes release 3.x.y as v0.3xx.y); the tool's version when absent. */
  readonly moduleVersion?: string;
  /**
   * `wrapper` mode only: a main package of the wrapper's own, for a command whose upstream `main` embeds files
   * its `go generate` step writes (not in the module). Answers the files of that package (name -> content) from
   * the downloaded module's folder; it is built as the tool's first binary.
   */
  readonly mainPackage?: (moduleDir: string) => Promise<Record<string, string>>;
}

export interface ToolSpec {
  readonly version: string;
  /**
   * Binaries the tool provides, each with the arguments that make it print its version (without a leading
   * `v`); the first is the one asked when looking for the tool on PATH. `null`: a program that prints no
   * version (a Pulumi plugin, which answers its version over gRPC): it is never taken from PATH.
   */
  readonly binaries: Readonly<Record<string, readonly string[] | null>>;
  readonly go: GoBuild;
  /** Official release archive for linux/amd64, for machines without `go` but with internet. */
  readonly download: (version: string) => { readonly url: string; readonly paths: Readonly<Record<string, string>> };
}

const PULUMI = 'v3.259.0';
/**
 * The Pulumi Kubernetes provider: release v4.25.0 is upstream commit f47bc2d6f199 (2026-01-15), which the Go
 * module proxy serves as the pseudo-version below; @pulumi/kubernetes 4.25.0 is the SDK generated from its schema.
 */
const KUBERNETES_PROVIDER = 'v4.25.0';
const KUBERNETES_PROVIDER_MODULE = 'v4.0.0-20260115033456-f47bc2d6f199';
const KUBERNETES = 'v1.36.3';
const bare = (v: string) => v.replace(/^v/, '');
/** Kubernetes' staging modules (k8s.io/api, ...) are published as v0.<minor>.<patch> of the same release. */
const stagingVersion = (v: string) => v.replace(/^v1\./, 'v0.');

export const TOOLS = {
  temporal: {
    version: 'v1.5.1',
    binaries: { temporal: ['--version'] },
    go: {
      module: 'github.com/temporalio/cli',
      packages: ['github.com/temporalio/cli/cmd/temporal'],
      mode: 'install',
      ldflags: ['github.com/temporalio/cli/temporalcli.Version=1.5.1'],
    },
    download: (v) => ({
      url: `https://github.com/temporalio/cli/releases/download/${v}/temporal_cli_${bare(v)}_linux_amd64.tar.gz`,
      paths: { temporal: 'temporal' },
    }),
  },
  pulumi: {
    version: PULUMI,
    binaries: { pulumi: ['version'] },
    go: {
      module: 'github.com/pulumi/pulumi/pkg/v3',
      packages: ['github.com/pulumi/pulumi/pkg/v3/cmd/pulumi'],
      mode: 'wrapper',
      // pkg's go.mod points the SDK at ../sdk; the published sdk module of the same version is what it means.
      localReplace: () => undefined,
      ldflags: [`github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${PULUMI}`],
    },
    download: (v) => ({
      url: `https://get.pulumi.com/releases/sdk/pulumi-${v}-linux-x64.tar.gz`,
      paths: { pulumi: 'pulumi/pulumi' },
    }),
  },
  kubernetes: {
    version: KUBERNETES,
    binaries: {
      'kube-apiserver': ['--version'], 'kube-controller-manager': ['--version'], 'kube-scheduler': ['--version'], kubectl: ['version', '--client'],
    },
    go: {
      module: 'k8s.io/kubernetes',
      packages: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'].map((b) => `k8s.io/kubernetes/cmd/${b}`),
      mode: 'wrapper',
      localReplace: (path) => (path.startsWith('k8s.io/') ? stagingVersion(KUBERNETES) : undefined),
      ldflags: [
        `k8s.io/component-base/version.gitVersion=${KUBERNETES}`,
        `k8s.io/component-base/version.gitMajor=1`,
        `k8s.io/component-base/version.gitMinor=${KUBERNETES.split('.')[1]}`,
        `k8s.io/client-go/pkg/version.gitVersion=${KUBERNETES}`,
        `k8s.io/client-go/pkg/version.gitMajor=1`,
        `k8s.io/client-go/pkg/version.gitMinor=${KUBERNETES.split('.')[1]}`,
      ],
    },
    download: (v) => ({
      url: `https://dl.k8s.io/${v}/kubernetes-server-linux-amd64.tar.gz`,
      paths: Object.fromEntries(
        ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'].map((b) => [b, `kubernetes/server/bin/${b}`]),
      ),
    }),
  },
  etcd: {
    version: 'v3.6.16',
    binaries: { etcd: ['--version'], etcdctl: ['version'] },
    go: {
      module: 'go.etcd.io/etcd/server/v3',
      packages: ['go.etcd.io/etcd/server/v3', 'go.etcd.io/etcd/etcdctl/v3'],
      mode: 'wrapper',
      // etcd's modules point at each other through ../ paths; their published versions are the same release.
      localReplace: () => undefined,
      rename: { server: 'etcd' },
    },
    download: (v) => ({
      url: `https://github.com/etcd-io/etcd/releases/download/${v}/etcd-${v}-linux-amd64.tar.gz`,
      paths: { etcd: `etcd-${v}-linux-amd64/etcd`, etcdctl: `etcd-${v}-linux-amd64/etcdctl` },
    }),
  },
  kwok: {
    version: 'v0.8.0',
    binaries: { kwok: ['--version'] },
    go: {
      module: 'sigs.k8s.io/kwok',
      packages: ['sigs.k8s.io/kwok/cmd/kwok'],
      mode: 'install',
      ldflags: ['sigs.k8s.io/kwok/pkg/consts.Version=v0.8.0'],
    },
    download: (v) => ({ url: `https://github.com/kubernetes-sigs/kwok/releases/download/${v}/kwok-linux-amd64`, paths: { kwok: 'kwok' } }),
  },
  prometheus: {
    version: 'v3.16.0',
    // promtool backfills history for npm run bench:observability (tsdb create-blocks-from openmetrics).
    binaries: { prometheus: ['--version'], promtool: ['--version'] },
    go: {
      module: 'github.com/prometheus/prometheus',
      packages: ['github.com/prometheus/prometheus/cmd/prometheus', 'github.com/prometheus/prometheus/cmd/promtool'],
      mode: 'install',
      moduleVersion: 'v0.316.0',
      // Built without the web UI's assets (a Node build of their own): the HTTP API Kiln queries is all there.
      ldflags: ['github.com/prometheus/common/version.Version=3.16.0'],
    },
    download: (v) => ({
      url: `https://github.com/prometheus/prometheus/releases/download/${v}/prometheus-${bare(v)}.linux-amd64.tar.gz`,
      paths: { prometheus: `prometheus-${bare(v)}.linux-amd64/prometheus`, promtool: `prometheus-${bare(v)}.linux-amd64/promtool` },
    }),
  },
  // The local Stripe stand-in (infra/servers/stripe-mock.ts): a server answering Stripe's API from Stripe's own
  // OpenAPI description, for development and the tests; production talks to Stripe itself (docs/concepts/cost-and-billing.md).
  'stripe-mock': {
    version: 'v0.203.0',
    binaries: { 'stripe-mock': ['-version'] },
    go: {
      module: 'github.com/stripe/stripe-mock',
      packages: ['github.com/stripe/stripe-mock'],
      mode: 'install',
      ldflags: ['main.version=0.203.0'],
    },
    download: (v) => ({ url: `https://github.com/stripe/stripe-mock/releases/download/${v}/stripe-mock_${bare(v)}_linux_amd64.tar.gz`, paths: { 'stripe-mock': 'stripe-mock' } }),
  },
  // The real Kubernetes provider plugin, installed into Kiln's PULUMI_HOME by pulumi-plugins.ts.
  'pulumi-kubernetes': {
    version: KUBERNETES_PROVIDER,
    binaries: { 'pulumi-resource-kubernetes': null },
    go: {
      module: 'github.com/pulumi/pulumi-kubernetes/provider/v4',
      moduleVersion: KUBERNETES_PROVIDER_MODULE,
      packages: [],
      mode: 'wrapper',
      // provider's go.mod points the SDK at ../sdk: the SDK module released with it.
      localReplace: (path) => (path === 'github.com/pulumi/pulumi-kubernetes/sdk/v4' ? KUBERNETES_PROVIDER : undefined),
      ldflags: [`github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=${bare(KUBERNETES_PROVIDER)}`],
      // Upstream's cmd/pulumi-resource-kubernetes embeds schema-embed.json and terraform-mapping-embed.json, which its
      // generate.go writes from the module's schema.json (with the version set) and terraform-mapping.json, both
      // compacted. The same files and the same five-line main, written here.
      mainPackage: providerMainPackage,
    },
    download: (v) => ({
      url: `https://github.com/pulumi/pulumi-kubernetes/releases/download/${v}/pulumi-resource-kubernetes-${v}-linux-amd64.tar.gz`,
      paths: { 'pulumi-resource-kubernetes': 'pulumi-resource-kubernetes' },
    }),
  },
} satisfies Record<string, ToolSpec>;

async function providerMainPackage(moduleDir: string): Promise<Record<string, string>> {
  const command = join(moduleDir, 'cmd', 'pulumi-resource-kubernetes');
  const schema = JSON.parse(await readFile(join(command, 'schema.json'), 'utf8')) as Record<string, unknown>;
  const mapping = JSON.parse(await readFile(join(command, 'terraform-mapping.json'), 'utf8')) as unknown;
  return {
    'schema-embed.json': JSON.stringify({ ...schema, version: bare(KUBERNETES_PROVIDER) }),
    'terraform-mapping-embed.json': JSON.stringify(mapping),
    'main.go': [
      'package main',
      '',
      'import (',
      '\t_ "embed"',
      '',
      '\t"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"',
      '\t"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"',
      ')',
      '',
      '//go:embed schema-embed.json',
      'var schema []byte',
      '',
      '//go:embed terraform-mapping-embed.json',
      'var mapping []byte',
      '',
      'func main() { provider.Serve("kubernetes", version.Version, schema, mapping) }',
      '',
    ].join('\n'),
  };
}

export type ToolName = keyof typeof TOOLS;

/** The Kubernetes provider plugin version the @pulumi/kubernetes SDK asks for: its exact pin in package.json (test/tools checks both). */
export const KUBERNETES_PROVIDER_VERSION = bare(KUBERNETES_PROVIDER);

/**
 * Provider plugins the Pulumi CLI runs, each the binary `pulumi-<kind>-<name>` of a tool above, installed into
 * Kiln's PULUMI_HOME under its name and version (pulumi-plugins.ts), so the CLI never downloads one.
 */
export const PULUMI_PLUGINS: readonly { kind: 'resource'; name: string; version: string; tool: ToolName }[] = [
  { kind: 'resource', name: 'kubernetes', version: KUBERNETES_PROVIDER_VERSION, tool: 'pulumi-kubernetes' },
];

/**
 * Tools from PyPI (python.ts): each in a virtual environment of its own in the cache, made with the `python3`
 * on PATH, installed as `pip install <package>==<version>` with its dependencies held to the versions of a
 * constraints file beside this one, so every machine runs the same code.
 */
export interface PythonToolSpec {
  readonly version: string;
  /** The PyPI project. */
  readonly package: string;
  /** Its commands, each with the arguments that make it print its version (the first is asked after installing). */
  readonly binaries: Readonly<Record<string, readonly string[]>>;
  /** A pip constraints file, relative to this folder: `pip freeze` of a fresh install, less the package itself. */
  readonly constraints: string;
}

export const PYTHON_TOOLS = {
  // The contract suite (test/contract/schemathesis.test.ts): property-based tests from the OpenAPI document.
  schemathesis: { version: '4.32.5', package: 'schemathesis', binaries: { schemathesis: ['--version'] }, constraints: 'schemathesis-constraints.txt' },
} satisfies Record<string, PythonToolSpec>;

export type PythonToolName = keyof typeof PYTHON_TOOLS;

/**
 * Commands from Debian packages (debian.ts): not pinned (each Debian release has its own build), installed with
 * apt-get when missing and `npm run tools` runs as root, else named with the command to run.
 */
export interface DebianPackageSpec {
  /** The commands the package provides that Kiln runs; any of them missing means the package is. */
  readonly commands: readonly string[];
  /** What needs it, said when it is missing. */
  readonly why: string;
}

export const DEBIAN_PACKAGES = {
  'poppler-utils': { commands: ['pdftoppm', 'pdftotext'], why: 'the invoice tests render and read the PDFs Kiln makes' },
  tmux: { commands: ['tmux'], why: 'the CLI test drives kiln chat in a real terminal (send-keys, capture-pane)' },
  'chromium-headless-shell': { commands: ['chromium-headless-shell'], why: 'the dashboard\'s browser tests (test/web/) drive it with playwright-core' },
} satisfies Record<string, DebianPackageSpec>;

export type DebianPackageName = keyof typeof DEBIAN_PACKAGES;
