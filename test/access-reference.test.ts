/** The table of every action and its routes in docs/users-and-policies.md is what `npm run docs:access` generates from the routes' declarations. */
import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { referencePath, renderAccessTable, renderReference } from '../scripts/access-reference.js';

describe('docs/users-and-policies.md: every action and the routes that need it', () => {
  it('is current', async () => {
    const page = await readFile(referencePath, 'utf8');
    expect(page).toBe(await renderReference(page));
  });

  it('names the actions of the escalation rules where they apply', async () => {
    const table = await renderAccessTable();
    expect(table).toMatch(/\| `admin:AttachUserOrGroupPolicy` \| [^|]*`POST v4\/iam\/user\/add\*`/);
    expect(table).toMatch(/\| `s3:GetObject` \| `GET v4\/object\/placement\*` \|/);
    expect(table).toMatch(/\| `admin:Lifecycle` \| `POST v4\/lifecycle\/run` \|/);
  });
});
