# topoqueue's controller image (deploy/manager.yaml runs `topoqueue controller`).
# Not built in this repository's CI (no container runtime there); kept minimal on purpose:
#   docker build -t ghcr.io/topoqueue/topoqueue:latest .
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin ./bin
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
USER node
ENTRYPOINT ["node", "/app/bin/topoqueue.js"]
CMD ["controller"]
