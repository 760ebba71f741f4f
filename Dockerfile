# The svc server image. Built by `npm run image` (scripts/build-image.ts), which imports the base
# image (node and its shared libraries only) and stages dist/ and production node_modules as the
# build context; nothing is pulled from a registry.
ARG BASE=svc-base:node
FROM ${BASE}
WORKDIR /app
COPY package.json package-lock.json ./
COPY node_modules ./node_modules
COPY dist ./dist
ENV NODE_ENV=production \
    SVC_ADDRESS=:9000 \
    SVC_CONSOLE_ADDRESS=:9001
EXPOSE 9000 9001
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=5s --retries=5 --start-period=30s CMD ["node", "/app/dist/src/cli/svc.js", "healthcheck"]
ENTRYPOINT ["node", "--initial-old-space-size=64", "/app/dist/src/cli/svc.js"]
CMD ["server", "/data"]
