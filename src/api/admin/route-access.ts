/**
 * The one check of an admin route's declared access (context.ts `RouteAccess`), made by the admin
 * API and by the console when it runs an admin route: the route's actions on the whole
 * deployment, then what its conditional rule asks of this call, judged for the caller by the
 * evaluator every S3 request goes through. Nothing is read or changed before it passes.
 */
import type { Permission, Principal } from '../../iam/index.js';
import { authorize, type AccessContext, type Caller } from '../s3/access.js';
import type { S3Context } from '../s3/context.js';
import type { AdminContext, AdminRequest, AdminRoute, RouteAccess } from './context.js';
import type { RouteSchema } from './route-schema.js';

/** The permissions one call of a route needs. */
export async function permissionsFor(access: RouteAccess, context: AdminContext, request: AdminRequest, caller: Principal): Promise<Permission[]> {
  const always = access.actions.map((action) => ({ action }));
  return access.conditional ? [...always, ...(await access.conditional.permissions(context, request, caller))] : always;
}

/** Throws AccessDenied unless the caller holds every action the call needs; returns them (root needs none). */
export async function requireRouteAccess(access: RouteAccess, context: AdminContext, request: AdminRequest, caller: Caller, objects: AccessContext): Promise<Permission[]> {
  if (caller.principal?.kind === 'root') return access.actions.map((action) => ({ action }));
  const needed = await permissionsFor(access, context, request, caller.principal!);
  await authorize(objects, caller, needed);
  return needed;
}

/** The sentence the reference and the OpenAPI document give a route's access. */
export function accessSentence(access: RouteAccess): string {
  const list = (actions: readonly string[]) => actions.map((action) => `\`${action}\``).join(', ');
  const always = access.actions.length > 0 ? `Needs ${list(access.actions)}` : 'Needs no action of its own';
  const also = access.conditional ? `; ${access.actions.length > 0 ? 'also ' : ''}${list(access.conditional.actions)} ${access.conditional.when.startsWith('always') ? '' : 'when '}${access.conditional.when.replace(/^always: /, 'for ')}` : '';
  return `${always}${also}.`;
}

/** The route's schema with its access sentence after its description (what the document shows). */
export function documentedSchema(route: Pick<AdminRoute, 'schema' | 'access'>): RouteSchema {
  return { ...route.schema, description: `${route.schema.description} ${accessSentence(route.access)}` };
}
