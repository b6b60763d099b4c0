# One image for every app; a Deployment picks the app with its command
# (`node apps/<app>/dist/main.js`), and the default runs the standalone.
#   docker build -t feedmill:0.1.0 .

# Build: every dependency, then the apps and libraries compiled to dist/.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps ./apps
COPY libs ./libs
COPY nx.json tsconfig.base.json .swcrc ./
RUN npm ci --no-audit --no-fund && NX_DAEMON=false npm run build
# What the runtime needs of each workspace: its package.json (npm links it) and its dist/;
# and the web console's files, served as they are written.
RUN mkdir -p /out && for dir in apps/* libs/*; do \
      mkdir -p "/out/$dir" && cp "$dir/package.json" "/out/$dir/" && \
      if [ -d "$dir/dist" ]; then cp -r "$dir/dist" "/out/$dir/"; fi; \
    done && cp -r libs/gateway-http/console /out/libs/gateway-http/

# Runtime: production dependencies and compiled code only, no sources, no compilers.
FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=build /out ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# The `node` user of the base image; the manifests run as this id with a read-only root.
USER 1000
EXPOSE 3000
CMD ["node", "apps/standalone/dist/main.js"]
