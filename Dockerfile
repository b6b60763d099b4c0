# One image for every app; the Deployment picks the app with its command.
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps ./apps
COPY libs ./libs
COPY nx.json tsconfig.base.json .swcrc ./
RUN npm ci --no-audit --no-fund && NX_DAEMON=false npm run build && npm prune --omit=dev

FROM node:22-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
USER 1000
EXPOSE 3000
CMD ["node", "apps/standalone/dist/main.js"]
