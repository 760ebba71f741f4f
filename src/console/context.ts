/** What the console's handlers are given by the composition root. */
import type { ObjectLayer } from '../object/index.js';
import type { AdminContext } from '../api/admin/context.js';
import type { SessionSealer } from './session.js';
import type { ClientOrigin } from './client-origin.js';
import type { OpenIdSignIn } from './openid.js';
import type { IamStore } from '../ops/iam-store.js';
import type { AuditLog } from '../ops/audit.js';
import type { S3Context } from '../api/s3/context.js';

/** The users and policies the console signs in, judges and manages (the IAM store every node shares). */
export type ConsoleIam = IamStore;

export interface ConsoleContext {
  /** The object layer (throws SlowDown while the server is still starting). */
  objects(): ObjectLayer;
  /** The admin services, the same the admin API calls. */
  admin(): AdminContext;
  /** Users and policies (throws SlowDown while the server is still starting). */
  iam(): ConsoleIam;
  sealer: SessionSealer;
  /** Sign-in with SSO, when SVC_IDENTITY_OPENID_CONFIG_URL is set. */
  openId?: OpenIdSignIn;
  /** The S3 API's public URL (SVC_SERVER_URL), when configured. */
  serverUrl?: string;
  /** The S3 listener's port: share links go to the console's host name at this port when no SVC_SERVER_URL is set. */
  s3Port: number;
  /** Root credentials sign share links (a user's share links are signed with its own keys). */
  credentials: { accessKey: string; secretKey: string };
  /** The environment the server was started with: the layout planner reads storage-class settings from it, as `svc plan` does. */
  launchEnv: Record<string, string | undefined>;
  /** This node's recent audit entries (the Users page's audit section). */
  audit: Pick<AuditLog, 'recent' | 'stats'>;
  nowMs(): number;
  /**
   * Tells every other node of the deployment that a session was signed out or ended here, so each
   * refuses its cookie too (a peer that does not answer is logged); absent on a single node.
   */
  announceSessionEnded?(ended: { sessionId: string; untilMs: number }): Promise<void>;
  /** The S3 API's context: bucket settings run its own handlers (s3-bridge.ts); absent, the settings routes answer NotImplemented. */
  s3?: () => S3Context;
  logger: { info(fields: Record<string, unknown>, message: string): void; warn(fields: Record<string, unknown>, message: string): void };
}

/** How a console route sees a request once the plugin has checked it. */
export interface ConsoleRequestFacts {
  origin: ClientOrigin;
}
