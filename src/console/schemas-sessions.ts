/** The sessions page's routes (routes-sessions.ts), in the console API's form. */
import { boolean, list, object, oneOfValues, statusQuery, text } from '../api/admin/route-schema.js';
import { consoleSchema } from './api-schemas.js';

const session = object({
  handle: text('names the session here (not its cookie or id)'),
  accessKey: text('who: the root access key, a user, or sso:<account>'),
  kind: oneOfValues(['root', 'user', 'sso'], 'how it signed in'),
  createdAt: text('sign-in time (ISO 8601)'),
  lastSeenAt: text('its last request to this node (ISO 8601)'),
  address: text('the client address of that request'),
  agent: text('its User-Agent (256 characters at most)'),
  current: boolean('the session asking'),
});
const ended = object({ ended: list(text('handle'), 'the sessions ended') });
const example = { handle: 'm3Yb0Jc8qvXf1sW2aLk9dQ', accessKey: 'svcadmin', kind: 'root', createdAt: '2026-11-25T06:00:00.000Z', lastSeenAt: '2026-11-25T06:40:12.000Z', address: '203.0.113.7', agent: 'Mozilla/5.0', current: true };

export const sessionsSchemas = {
  list: consoleSchema('session', {
    summary: 'Console sessions',
    description: "The sessions of the signed-in principal that made a request to this node, most recently seen first (with all=true every principal's: admin:ListUsers). Each node remembers its own, in memory: `scope` is `node`.",
    querystring: statusQuery({ all: text('true: every principal\'s sessions (true or false, else InvalidArgument)') }),
    response: object({ scope: oneOfValues(['node'], 'sessions this node has served'), sessions: list(session, 'sessions') }),
    example: { query: 'all=false', response: { scope: 'node', sessions: [example] } },
  }),
  end: consoleSchema('session', {
    summary: 'End a session',
    description: "Its cookie is refused from now on by this node and, once told (before the answer), by every other node of the deployment. Another principal's needs admin:DisableUser. Refusals: `NoSuchConsoleSession`, the session asking (`InvalidArgument`: sign out instead).",
    querystring: statusQuery({}),
    params: object({ handle: text('the session\'s handle') }),
    response: ended,
    example: { params: { handle: 'm3Yb0Jc8qvXf1sW2aLk9dQ' }, response: { ended: ['m3Yb0Jc8qvXf1sW2aLk9dQ'] } },
  }),
  endOthers: consoleSchema('session', {
    summary: 'End every other session',
    description: "Ends the signed-in principal's other sessions this node knows (this one stays), on every node.",
    querystring: statusQuery({}),
    response: ended,
    example: { response: { ended: ['m3Yb0Jc8qvXf1sW2aLk9dQ'] } },
  }),
};
