/** The preview route's declaration (routes-preview.ts), in the console API's form. */
import { object, statusQuery, text } from '../api/admin/route-schema.js';
import { consoleSchema } from './api-schemas.js';

export const previewSchema = consoleSchema('objects', {
  summary: 'Preview a version',
  description: 'The bytes of a version for the page to show (an image, text as text/plain, audio or video), inline, under the sandbox policy of downloads. Up to 16 MiB and not encrypted; any other version is 415 PreviewUnavailable saying why.',
  querystring: statusQuery({ key: text('object key'), versionId: text('a version (default: the latest)') }, ['key']),
  params: object({ bucket: text('bucket name') }),
  response: { type: 'string', description: 'the object bytes' },
  example: { params: { bucket: 'photos' }, query: 'key=cat.jpg', response: 'hello' },
});
