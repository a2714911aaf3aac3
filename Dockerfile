# One image for the three processes; docker-compose.yml picks the command.
# Node 22 LTS, the runtime everywhere (engines, CI, npm scripts: see README).
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev && npm run prisma:generate

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app /app
USER node
CMD ["node", "--enable-source-maps", "--experimental-async-context-frame", "dist/apps/mcp-edge/src/main.js"]
