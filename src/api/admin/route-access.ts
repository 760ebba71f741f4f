/**
 * The one check of an admin route's declared access (context.ts `RouteAccess`), made by the admin
 * API and by the console when it runs an admin route: the route's actions on the whole
 * deployment, then what its conditional rule asks of this call, judged for the caller by the
 * evaluator every S3 request goes through. Nothing is read or changed before it passes.
 */
import type { Permission, Principal } from '../../iam/index.js';
import { authorize, type Caller } from '../s3/access.js';
import type { S3Context } from '../s3/context.js';
import type { AdminContext, AdminRequest, RouteAccess } from './context.js';

/** The permissions one call of a route needs. */
export async function permissionsFor(access: RouteAccess, context: AdminContext, request: AdminRequest, caller: Principal): Promise<Permission[]> {
  const always = access.actions.map((action) => ({ action }));
  return access.conditional ? [...always, ...(await access.conditional.permissions(context, request, caller))] : always;
}

/** Throws AccessDenied unless the caller holds every action the call needs. */
export async function requireRouteAccess(access: RouteAccess, context: AdminContext, request: AdminRequest, caller: Caller, objects: Pick<S3Context, 'objects'>): Promise<void> {
  if (caller.principal?.kind === 'root') return;
  await authorize(objects, caller, await permissionsFor(access, context, request, caller.principal!));
}

/** Whether the route's conditional rule depends on the request's body (then it runs once the body is read). */
export function needsBody(access: RouteAccess): boolean {
  return access.conditional !== undefined;
}
