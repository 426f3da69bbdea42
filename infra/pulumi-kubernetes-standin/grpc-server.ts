// The pulumirpc.ResourceProvider gRPC service on @grpc/grpc-js, with the messages generated in
// @pulumi/pulumi/proto: each RPC turns its request into plain values for KubernetesProvider and its answer
// back into protobuf. Methods not listed (Construct, Call, List, Parameterize) answer UNIMPLEMENTED.
import grpc from '@grpc/grpc-js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import emptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import pluginPb from '@pulumi/pulumi/proto/plugin_pb.js';
import providerGrpc from '@pulumi/pulumi/proto/provider_grpc_pb.js';
import providerPb from '@pulumi/pulumi/proto/provider_pb.js';
import statusPb from '@pulumi/pulumi/proto/status_pb.js';
import type { DiffKind } from './diff.ts';
import { PartialFailure, type KubernetesProvider } from './provider.ts';
import { configVariables } from './provider-config.ts';
import { fromStruct, reveal, toStruct, type JsonObject } from './wire.ts';

const DIFF_KINDS: Record<DiffKind, providerPb.PropertyDiff.Kind> = {
  ADD: providerPb.PropertyDiff.Kind.ADD,
  ADD_REPLACE: providerPb.PropertyDiff.Kind.ADD_REPLACE,
  DELETE: providerPb.PropertyDiff.Kind.DELETE,
  DELETE_REPLACE: providerPb.PropertyDiff.Kind.DELETE_REPLACE,
  UPDATE: providerPb.PropertyDiff.Kind.UPDATE,
  UPDATE_REPLACE: providerPb.PropertyDiff.Kind.UPDATE_REPLACE,
};

const AUTONAMING_MODES = { 0: 'propose', 1: 'enforce', 2: 'disable' } as const;

export interface ServerOptions {
  readonly provider: KubernetesProvider;
  /** The version the plugin reports (the one the SDK asked for). */
  readonly version: string;
  readonly log: (line: string) => void;
}

type Handler<Req, Res> = (request: Req) => Promise<Res> | Res;

/** A unary RPC: the handler's answer, or its error as a gRPC status (with the engine's partial-failure detail when there is one). */
function unary<Req, Res>(name: string, log: (line: string) => void, handler: Handler<Req, Res>): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => handler(call.request))
      .then((response) => callback(null, response), (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        log(`${name} failed: ${message}`);
        callback(toServiceError(error, message));
      });
  };
}

function toServiceError(error: unknown, message: string): Partial<grpc.StatusObject> {
  if (!(error instanceof PartialFailure)) return { code: grpc.status.UNKNOWN, details: message };
  const detail = new providerPb.ErrorResourceInitFailed();
  detail.setId(error.id);
  detail.setProperties(toStruct(error.properties));
  detail.setReasonsList([message]);
  const any = new anyPb.Any();
  any.pack(detail.serializeBinary(), 'pulumirpc.ErrorResourceInitFailed');
  const status = new statusPb.Status();
  status.setCode(grpc.status.UNKNOWN);
  status.setMessage(message);
  status.setDetailsList([any]);
  const metadata = new grpc.Metadata();
  metadata.add('grpc-status-details-bin', Buffer.from(status.serializeBinary()));
  return { code: grpc.status.UNKNOWN, details: message, metadata };
}

export function providerService({ provider, version, log }: ServerOptions): grpc.UntypedServiceImplementation {
  // Outputs carry secrets only when the engine said it takes them (it always does; the protocol lets it refuse).
  let acceptSecrets = true;
  const out = (value: JsonObject) => toStruct(acceptSecrets ? value : (reveal(value) as JsonObject));
  return {
    // The same capabilities as Configure answers: secrets yes, resource references and outputs no.
    handshake: unary<providerPb.ProviderHandshakeRequest, providerPb.ProviderHandshakeResponse>('Handshake', log, () =>
      new providerPb.ProviderHandshakeResponse().setAcceptSecrets(true).setSupportsAutonamingConfiguration(true)),

    getPluginInfo: unary<emptyPb.Empty, pluginPb.PluginInfo>('GetPluginInfo', log, () => new pluginPb.PluginInfo().setVersion(version)),

    // Nothing in Kiln reads the schema (the SDK is generated already); the package's name and version are enough for the engine.
    getSchema: unary<providerPb.GetSchemaRequest, providerPb.GetSchemaResponse>('GetSchema', log, () =>
      new providerPb.GetSchemaResponse().setSchema(JSON.stringify({ name: 'kubernetes', version }))),

    checkConfig: unary<providerPb.CheckRequest, providerPb.CheckResponse>('CheckConfig', log, (request) =>
      new providerPb.CheckResponse().setInputs(request.getNews())),

    diffConfig: unary<providerPb.DiffRequest, providerPb.DiffResponse>('DiffConfig', log, (request) => {
      const diff = provider.diffConfig(fromStruct(request.getOlds()), fromStruct(request.getNews()));
      return new providerPb.DiffResponse()
        .setChanges(diff.changed.length ? providerPb.DiffResponse.DiffChanges.DIFF_SOME : providerPb.DiffResponse.DiffChanges.DIFF_NONE)
        .setDiffsList(diff.changed)
        .setReplacesList(diff.replaces);
    }),

    configure: unary<providerPb.ConfigureRequest, providerPb.ConfigureResponse>('Configure', log, (request) => {
      acceptSecrets = request.getAcceptsecrets();
      provider.configure(configVariables(request.getVariablesMap().toArray()));
      return new providerPb.ConfigureResponse().setAcceptsecrets(true).setSupportspreview(true).setSupportsAutonamingConfiguration(true);
    }),

    attach: unary<pluginPb.PluginAttach, emptyPb.Empty>('Attach', log, () => new emptyPb.Empty()),

    cancel: unary<emptyPb.Empty, emptyPb.Empty>('Cancel', log, () => {
      provider.cancelAll();
      return new emptyPb.Empty();
    }),

    invoke: unary<providerPb.InvokeRequest, providerPb.InvokeResponse>('Invoke', log, (request) => {
      throw new Error(`unknown function ${request.getTok()}: the Kiln stand-in for the Kubernetes provider implements no functions`);
    }),

    getMapping: unary<providerPb.GetMappingRequest, providerPb.GetMappingResponse>('GetMapping', log, () => new providerPb.GetMappingResponse()),
    getMappings: unary<providerPb.GetMappingsRequest, providerPb.GetMappingsResponse>('GetMappings', log, () => new providerPb.GetMappingsResponse()),

    check: unary<providerPb.CheckRequest, providerPb.CheckResponse>('Check', log, async (request) => {
      const autonaming = request.getAutonaming();
      const result = await provider.check({
        urn: request.getUrn(),
        olds: fromStruct(request.getOlds()),
        news: fromStruct(request.getNews()),
        randomSeed: request.getRandomseed_asU8(),
        autonaming: autonaming ? { mode: AUTONAMING_MODES[autonaming.getMode()], proposedName: autonaming.getProposedName() } : undefined,
      });
      return new providerPb.CheckResponse()
        .setInputs(out(result.inputs))
        .setFailuresList(result.failures.map((f) => new providerPb.CheckFailure().setProperty(f.property).setReason(f.reason)));
    }),

    diff: unary<providerPb.DiffRequest, providerPb.DiffResponse>('Diff', log, async (request) => {
      const result = await provider.diff({
        urn: request.getUrn(),
        olds: fromStruct(request.getOlds()),
        news: fromStruct(request.getNews()),
        ignoreChanges: request.getIgnorechangesList(),
      });
      const response = new providerPb.DiffResponse()
        .setChanges(result.changed ? providerPb.DiffResponse.DiffChanges.DIFF_SOME : providerPb.DiffResponse.DiffChanges.DIFF_NONE)
        .setReplacesList(result.replaces)
        .setDeletebeforereplace(result.deleteBeforeReplace)
        .setHasdetaileddiff(true);
      const detailed = response.getDetaileddiffMap();
      for (const [path, d] of Object.entries(result.detailedDiff)) {
        detailed.set(path, new providerPb.PropertyDiff().setKind(DIFF_KINDS[d.kind]).setInputdiff(d.inputDiff));
      }
      return response;
    }),

    create: unary<providerPb.CreateRequest, providerPb.CreateResponse>('Create', log, async (request) => {
      const result = await provider.create({
        urn: request.getUrn(), properties: fromStruct(request.getProperties()), timeout: request.getTimeout(), preview: request.getPreview(),
      });
      return new providerPb.CreateResponse().setId(result.id).setProperties(out(result.properties));
    }),

    read: unary<providerPb.ReadRequest, providerPb.ReadResponse>('Read', log, async (request) => {
      const result = await provider.read({
        urn: request.getUrn(), id: request.getId(), properties: fromStruct(request.getProperties()), inputs: fromStruct(request.getInputs()),
      });
      const response = new providerPb.ReadResponse().setId(result.id);
      if (result.properties) response.setProperties(out(result.properties));
      if (result.inputs) response.setInputs(out(result.inputs));
      return response;
    }),

    update: unary<providerPb.UpdateRequest, providerPb.UpdateResponse>('Update', log, async (request) => {
      const result = await provider.update({
        urn: request.getUrn(),
        id: request.getId(),
        olds: fromStruct(request.getOlds()),
        news: fromStruct(request.getNews()),
        timeout: request.getTimeout(),
        ignoreChanges: request.getIgnorechangesList(),
        preview: request.getPreview(),
      });
      return new providerPb.UpdateResponse().setProperties(out(result.properties));
    }),

    delete: unary<providerPb.DeleteRequest, emptyPb.Empty>('Delete', log, async (request) => {
      await provider.delete({ urn: request.getUrn(), id: request.getId(), properties: fromStruct(request.getProperties()), timeout: request.getTimeout() });
      return new emptyPb.Empty();
    }),
  };
}

/** Serves the provider on a free loopback port; answers the port. */
export async function serveProvider(options: ServerOptions): Promise<{ port: number; server: grpc.Server }> {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 400 * 1024 * 1024 });
  server.addService(providerGrpc.ResourceProviderService, providerService(options));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  return { port, server };
}
