/** Liveness and readiness routes (SPEC "Endpoints"): `/health`, `/health/ready`, console health. */
import type { FastifyInstance } from 'fastify';

export interface HealthState {
  /** True once format quorum is reached and the object layer serves. */
  ready(): boolean;
  /** True while the server is shutting down (readiness fails so balancers drain it). */
  stopping(): boolean;
}

export async function healthPlugin(app: FastifyInstance, options: { state: HealthState }): Promise<void> {
  app.get('/health', async (_request, reply) => reply.code(200).send({ status: 'ok' }));
  app.get('/health/ready', async (_request, reply) => {
    const ready = options.state.ready() && !options.state.stopping();
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : options.state.stopping() ? 'stopping' : 'starting' });
  });
}

export async function consoleHealthPlugin(app: FastifyInstance, options: { state: HealthState }): Promise<void> {
  app.get('/svc/console/health', async (_request, reply) => reply.code(200).send({ status: 'ok', ready: options.state.ready() }));
}
