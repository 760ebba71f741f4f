/**
 * What the signed-in session may do, as the server judges it (GET permissions): the deployment's
 * actions, or a bucket's under a prefix. The pages hide or disable what would be refused and say
 * why; the server still checks every call.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { api } from './api';
import { usePoll } from './components';

export interface Judgement {
  allowed: boolean;
  reason?: string;
}

export interface Permissions {
  principal: string;
  root: boolean;
  actions: Record<string, Judgement>;
}

/** The deployment's permissions, fetched once by the shell. */
export const PermissionsContext = createContext<Permissions | undefined>(undefined);

export function useDeploymentPermissions(): Permissions | undefined {
  return useContext(PermissionsContext);
}

/** A bucket's (and prefix's) permissions, asked again when they change (not polled). */
export function useBucketPermissions(bucket: string, prefix = ''): Permissions | undefined {
  return usePoll(() => api<Permissions>('GET', 'permissions', { query: { bucket, prefix } }), 0, [bucket, prefix]).data;
}

/** Allowed until the answer says otherwise is wrong both ways: unknown is not allowed yet. */
export function may(permissions: Permissions | undefined, action: string): Judgement {
  if (!permissions) return { allowed: false, reason: 'Checking your permissions…' };
  return permissions.actions[action] ?? { allowed: false, reason: `Unknown action ${action}` };
}

/** Undefined when the action is allowed; otherwise the reason to show beside its control. */
export function permissionReason(permissions: Permissions | undefined, action: string): string | undefined {
  const judgement = may(permissions, action);
  return judgement.allowed ? undefined : judgement.reason;
}
