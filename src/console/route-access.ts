/**
 * What each console route needs, declared next to its schema (`config.access`): the plugin
 * refuses to register a route without a declaration, checks admin actions on the whole
 * deployment itself before anything else, and lists every declaration for the reference and the
 * authorization matrix test. S3 actions on a route's bucket or objects are checked by its handler
 * (it knows the resource), with the same evaluator.
 */
import type { RouteAccess } from '../api/admin/context.js';

export type ConsoleRouteAccess =
  /** No session needed; says why (sign-in, the SSO flow, the API document). */
  | { public: string }
  /** Any signed-in session; says what it shows (for example only the buckets the session may list). */
  | { session: string }
  /** Admin actions on the whole deployment, checked by the plugin before the handler runs; conditional ones by the handler. */
  | { actions: readonly string[]; on: 'deployment'; conditional?: Conditional }
  /** S3 actions on the route's bucket or objects, checked by the handler (it knows the resource). */
  | { actions: readonly string[]; on: 'bucket' | 'object'; conditional?: Conditional }
  /** An admin API route run in-process: its own declaration (api/admin/context.ts). */
  | { adminRoute: RouteAccess };

/** Actions only some calls need (or need instead of the route's own): `when` says which. */
export interface Conditional {
  actions: readonly string[];
  when: string;
}

/** The route's declaration; undefined when it has none. */
export function accessOf(config: unknown): ConsoleRouteAccess | undefined {
  return (config as { access?: ConsoleRouteAccess } | undefined)?.access;
}

/** Every action a declaration names, for the reference and the matrix test. */
export function declaredActions(access: ConsoleRouteAccess): string[] {
  if ('adminRoute' in access) return [...access.adminRoute.actions, ...(access.adminRoute.conditional?.actions ?? [])];
  return 'actions' in access ? [...access.actions, ...(access.conditional?.actions ?? [])] : [];
}
