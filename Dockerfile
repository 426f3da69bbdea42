# Kiln's image: one image for its three processes, each started by its own command (stacks/kiln-on-kubernetes
# sets them): `node control-plane/main.ts` (the API, the default), `node workflows/worker.ts`, `node gateway/main.ts`.
# Node 24 runs the TypeScript sources as they are (type stripping): there is no compile step.
#
#   docker build -t registry.example.com/kiln:0.1.0 .

ARG NODE_IMAGE=node:24-bookworm-slim

# The dashboard (web/dist) and the documentation site (docs/.vitepress/dist), which the API serves at / and /docs.
# No install scripts: none is needed to build, and the `node` devDependency's would fetch a second Node 24 (the
# image's runs the builds, called directly rather than through npm run, which would put that one first on PATH).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json client/
RUN npm ci --ignore-scripts
COPY . .
RUN node node_modules/vite/bin/vite.js build --config web/vite.config.ts \
 && node node_modules/vitepress/bin/vitepress.js build docs

# The worker's Pulumi CLI and the provider plugins its stacks use, at the versions Kiln pins: the CLI's in
# infra/tools/versions.ts, each plugin's that of its SDK in package-lock.json. The worker never downloads a plugin.
FROM ${NODE_IMAGE} AS pulumi
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/*
WORKDIR /versions
COPY infra/tools/versions.ts package-lock.json ./
ENV PULUMI_HOME=/opt/pulumi/home PULUMI_SKIP_UPDATE_CHECK=true
RUN set -eu; \
    url=$(node -e "import('./versions.ts').then(({ TOOLS: { pulumi } }) => console.log(pulumi.download(pulumi.version).url))"); \
    mkdir -p /opt/pulumi; \
    curl -fsSL "$url" | tar -xz -C /opt/pulumi; \
    mv /opt/pulumi/pulumi /opt/pulumi/bin; \
    for plugin in kubernetes aws; do \
      version=$(node -p "require('./package-lock.json').packages['node_modules/@pulumi/$plugin'].version"); \
      /opt/pulumi/bin/pulumi plugin install resource "$plugin" "$version"; \
    done

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    DATA_DIR=/data \
    PULUMI_HOME=/opt/pulumi/home \
    KILN_PULUMI_CLI_ROOT=/opt/pulumi
WORKDIR /app
# Runtime dependencies only: the processes import no devDependency. No install scripts: the native modules
# (argon2, @swc/core) ship prebuilt binaries, and @pulumi/kubernetes's would download the plugin installed above.
COPY package.json package-lock.json ./
COPY client/package.json client/
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=pulumi --chown=node:node /opt/pulumi /opt/pulumi
# The processes' sources; the docs' Markdown too (the assistant answers from it, and pages include the README
# and ARCHITECTURE.md), with the two built sites.
COPY catalog catalog
COPY lib lib
COPY control-plane control-plane
COPY gateway gateway
COPY workflows workflows
COPY stacks stacks
COPY README.md ARCHITECTURE.md ./
COPY --from=build /app/docs docs
COPY --from=build /app/web/dist web/dist
RUN mkdir /data && chown node:node /data
USER node
EXPOSE 8080 8081
CMD ["node", "control-plane/main.ts"]
