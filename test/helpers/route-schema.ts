/** Checks an admin answer, and the route's own example, against the route's declared answer schema. */
import { expect } from 'vitest';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { AdminRoute } from '../../src/api/admin/routes.js';

export function fitsRouteSchema(routes: AdminRoute[], path: string, answer: unknown): void {
  const ajv = new Ajv({ strict: false });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  const route = routes.find((candidate) => candidate.path === path)!;
  const validate = ajv.compile(route.schema.response);
  expect(validate(answer), JSON.stringify(validate.errors)).toBe(true);
  expect(ajv.compile(route.schema.response)(route.schema.example.response)).toBe(true);
}
