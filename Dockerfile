# The image of any of the six services, built from the repository root:
#   docker build --build-arg SERVICE=verifier -t humanpass/verifier .
# SERVICE: agent-auth, attestations-api, chain-indexer, payment-gateway, verifier or webhooks.
# NODE_IMAGE: a Node 26 image with npm (the line of .node-version); where no registry is reachable, a locally built
#   one (docker build --build-arg NODE_IMAGE=humanpass-local/node:26 …).
# No `# syntax` line on purpose: BuildKit would pull its frontend image, and the classic builder reads this as is.
ARG NODE_IMAGE=node:26-bookworm-slim

# The manifests alone (and the staging script), so that the installs below are redone only when a manifest or the
# lock file changes: the classic builder keys a COPY by the content of what it copies.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json ! -path ./scripts/stage-service.mjs -delete \
 && find . -type d -empty -delete

# Install, then compile and bundle with the dev dependencies (TypeScript, esbuild); the service's production
# dependencies are installed alone, in /runtime.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY --from=manifests /src .
# Before SERVICE is declared, so the service builds share this layer instead of installing five times.
RUN npm ci --no-audit --no-fund --loglevel=error
ARG SERVICE
RUN test -n "${SERVICE}" || { echo "--build-arg SERVICE=<service> is required" >&2; exit 1; }
RUN test -f "services/${SERVICE}/package.json" || { echo "no service named ${SERVICE}" >&2; exit 1; }
# /runtime: the service and the workspace packages it needs, with only their production dependencies at the
# versions of the lock file (scripts/stage-service.mjs says why not npm ci -w); their dist/ and data come below.
RUN node scripts/stage-service.mjs --manifests "${SERVICE}" /runtime \
 && cd /runtime \
 && npm install --omit=dev --no-audit --no-fund --loglevel=error \
 && if [ -e node_modules/tsx ]; then echo "tsx must not be a production dependency of ${SERVICE}" >&2; exit 1; fi
COPY . .
RUN node scripts/build.mjs "services/${SERVICE}/tsconfig.build.json" \
 && node scripts/stage-service.mjs "${SERVICE}" /runtime

FROM ${NODE_IMAGE}
ARG NODE_IMAGE
ARG SERVICE
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="humanpass-${SERVICE}" \
      org.opencontainers.image.description="humanpass ${SERVICE} service" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
# NODE_COMPILE_CACHE: V8's code for every module the service loads at start, compiled at build (below): a start then
# compiles almost nothing.
# SERVICE_VERSION: the release (VERSION, the image's tag: scripts/images.sh) as every span's and series'
# service.version, so a rollout's old and new replicas can be told apart; an overlay sets DEPLOYMENT_ENVIRONMENT.
ENV NODE_ENV=production \
    SERVICE=${SERVICE} \
    SERVICE_VERSION=${VERSION} \
    NODE_COMPILE_CACHE=/app/.compile-cache
# The code is owned by root and the process runs as an unprivileged uid, 10001 (the Kubernetes manifests' runAsUser
# and compose's user), so a compromised service cannot rewrite itself; nothing is written outside /tmp, so a
# read-only root filesystem works.
COPY --from=build --chown=root:root /runtime /app
COPY --from=build --chown=root:root /src/scripts/fill-compile-cache.mjs /app/fill-compile-cache.mjs
WORKDIR /app/services/${SERVICE}
# Node keeps a compile cache per uid, so it is filled as the uid the service runs as, then handed to root and made
# readable: the service reads it and cannot change what a later start would run.
RUN mkdir /app/.compile-cache && chown 10001:10001 /app/.compile-cache
USER 10001:10001
RUN node /app/fill-compile-cache.mjs dist/service.js $(ls dist/*-worker.js 2>/dev/null)
USER root
RUN chown -R root:root /app/.compile-cache && chmod -R a+rX,go-w /app/.compile-cache
USER 10001:10001
EXPOSE 8080 8081 8082 8083 8084 4021
# Ready to serve (/readyz 200) on PORT, or on the service's default port when PORT is not set; asked with bash's
# /dev/tcp, so no Node process starts for each check.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["bash", "-c", "declare -A p=([verifier]=8080 [attestations-api]=8081 [agent-auth]=8082 [chain-indexer]=8083 [payment-gateway]=4021 [webhooks]=8084); exec 3<>/dev/tcp/127.0.0.1/${PORT:-${p[$SERVICE]}} && printf 'GET /readyz HTTP/1.0\\r\\n\\r\\n' >&3 && read -r _ status _ <&3 && [ \"$status\" = 200 ]"]
# SIGTERM drains HTTP, stops the consumers and background work, then closes the pools.
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "dist/service.js"]
