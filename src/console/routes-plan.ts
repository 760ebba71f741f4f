/**
 * The layout planner: `POST /plan` with `{ patterns: string[], driveSize?: "8TiB" }` answers what
 * `svc server <patterns>` would do in this server's environment, the very `planLaunch` that
 * `svc plan --json` prints: the accepted layout, or the rejection with its rule. Starts nothing.
 */
import type { FastifyInstance } from 'fastify';
import { SvcError } from '../errors/index.js';
import { planLaunch } from '../cluster/launch-plan.js';
import { parseByteSize } from '../util/sizes.js';
import { limits } from '../util/limits.js';
import type { ConsoleContext } from './context.js';
import { bodyRecord } from './input.js';
import { adminActions } from './access.js';
import { requestAccess } from './request-state.js';
import { planSchema } from './api-schemas.js';

export async function planRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.post('/plan', { schema: planSchema, config: { access: { actions: [adminActions.serverInfo], on: 'deployment' } } }, async (request) => {
    const body = bodyRecord(request.body);
    const driveSizeBytes = driveSizeOf(body.driveSize);
    return planLaunch(patternsOf(body.patterns), context.launchEnv, driveSizeBytes === undefined ? {} : { driveSizeBytes });
  });
}

function patternsOf(value: unknown): string[] {
  const fine = (pattern: unknown) => typeof pattern === 'string' && pattern.trim() !== '' && pattern.length <= limits.consolePlanPatternCharsMax;
  if (!Array.isArray(value) || value.length === 0 || value.length > limits.consolePlanPatternsMax || !value.every(fine)) {
    throw new SvcError('InvalidArgument', `patterns must list 1 to ${limits.consolePlanPatternsMax} launch patterns such as /data/d{1...4}`, { field: 'patterns' });
  }
  return (value as string[]).map((pattern) => pattern.trim());
}

function driveSizeOf(value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new SvcError('InvalidArgument', 'driveSize must be a size such as 8TiB', { field: 'driveSize' });
  try {
    return parseByteSize(value);
  } catch (error) {
    throw new SvcError('InvalidArgument', `driveSize: ${(error as Error).message}`, { field: 'driveSize' });
  }
}
