/**
 * The bucket settings page's lifecycle and policy sections: lifecycle rules listed, a form for
 * the common ones (expire after N days, noncurrent versions after N days, abort unfinished uploads
 * after N days) and the XML for the rest; the bucket policy in a JSON editor, a helper that makes
 * a prefix publicly readable, and a warning whenever the bucket is public (GetBucketPolicyStatus).
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { Card, Empty, RowAction, usePoll } from './components';
import type { Permissions } from './permissions';
import { childText, DocumentEditor, elements, escapeXml, parseXml, SaveOutcome, settingReason, useSetting, withElement, withoutElement } from './bucket-setting';

const lifecycleTemplate = '<LifecycleConfiguration>\n  <Rule>\n    <ID>expire-logs</ID>\n    <Filter><Prefix>logs/</Prefix></Filter>\n    <Status>Enabled</Status>\n    <Expiration><Days>30</Days></Expiration>\n  </Rule>\n</LifecycleConfiguration>';

interface RuleRow {
  id: string;
  prefix: string;
  status: string;
  actions: string[];
}

function rulesOf(document: string | null | undefined): RuleRow[] {
  const xml = parseXml(document);
  if (!xml) return [];
  return elements(xml, 'Rule').map((rule) => {
    const actions: string[] = [];
    const days = (name: string, inner: string) => {
      const element = elements(rule, name)[0];
      return element ? childText(element, inner) : undefined;
    };
    const expire = days('Expiration', 'Days');
    if (expire) actions.push(`expire after ${expire} days`);
    if (elements(rule, 'Expiration')[0] && childText(elements(rule, 'Expiration')[0]!, 'ExpiredObjectDeleteMarker') === 'true') actions.push('remove expired delete markers');
    const noncurrent = days('NoncurrentVersionExpiration', 'NoncurrentDays');
    if (noncurrent) actions.push(`noncurrent versions after ${noncurrent} days`);
    const abort = days('AbortIncompleteMultipartUpload', 'DaysAfterInitiation');
    if (abort) actions.push(`abort unfinished uploads after ${abort} days`);
    return { id: childText(rule, 'ID') ?? '', prefix: childText(rule, 'Prefix') ?? '', status: childText(rule, 'Status') ?? '', actions };
  });
}

function ruleXml(rule: { id: string; prefix: string; expireDays: string; noncurrentDays: string; abortDays: string }): string {
  const parts = [`<ID>${escapeXml(rule.id)}</ID>`, `<Filter><Prefix>${escapeXml(rule.prefix)}</Prefix></Filter>`, '<Status>Enabled</Status>'];
  if (rule.expireDays !== '') parts.push(`<Expiration><Days>${escapeXml(rule.expireDays)}</Days></Expiration>`);
  if (rule.noncurrentDays !== '') parts.push(`<NoncurrentVersionExpiration><NoncurrentDays>${escapeXml(rule.noncurrentDays)}</NoncurrentDays></NoncurrentVersionExpiration>`);
  if (rule.abortDays !== '') parts.push(`<AbortIncompleteMultipartUpload><DaysAfterInitiation>${escapeXml(rule.abortDays)}</DaysAfterInitiation></AbortIncompleteMultipartUpload>`);
  return `<Rule>${parts.join('')}</Rule>`;
}

export function LifecycleSection(props: { bucket: string; permissions: Permissions | undefined }) {
  const state = useSetting(props.bucket, 'lifecycle');
  const putReason = settingReason(props.permissions, 'lifecycle', 'put');
  const rules = rulesOf(state.document);
  const [form, setForm] = useState({ id: '', prefix: '', expireDays: '', noncurrentDays: '', abortDays: '' });
  const field = (name: keyof typeof form, label: string, type: 'text' | 'number' = 'text') => (
    <label class="field compact">
      <span>{label}</span>
      {type === 'number' ? (
        <input name={`lifecycle-${name}`} type="number" min={1} value={form[name]} onInput={(event) => setForm({ ...form, [name]: (event.target as HTMLInputElement).value })} />
      ) : (
        <input name={`lifecycle-${name}`} type="text" value={form[name]} onInput={(event) => setForm({ ...form, [name]: (event.target as HTMLInputElement).value })} />
      )}
    </label>
  );
  // The outcome of a save is shown by what made it: the form, or the XML editor.
  const [fromForm, setFromForm] = useState(false);
  // Whether the XML editor is open is the section's state, not the element's: the section is drawn
  // again when a save is read back (the rules table replacing "No lifecycle rules"), and the editor stays as the user left it.
  const [xmlOpen, setXmlOpen] = useState(false);
  const noAction = form.expireDays === '' && form.noncurrentDays === '' && form.abortDays === '';
  const add = async (event: Event) => {
    event.preventDefault();
    setFromForm(true);
    if (await state.save(withElement(state.document, 'LifecycleConfiguration', ruleXml(form)))) setForm({ id: '', prefix: '', expireDays: '', noncurrentDays: '', abortDays: '' });
  };
  const removeRule = (index: number) => {
    const rest = withoutElement(state.document!, 'Rule', index);
    void (rest === undefined ? state.remove() : state.save(rest));
  };
  return (
    <Card title="Lifecycle rules">
      {state.document === null ? <Empty key="empty">No lifecycle rules: objects stay until deleted.</Empty> : null}
      {rules.length > 0 ? (
        <table key="rules" class="table" aria-label="Lifecycle rules">
          <thead>
            <tr>
              <th>Rule</th>
              <th>Prefix</th>
              <th>Does</th>
              <th class="actions-col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rules.map((rule, index) => (
              <tr key={`${rule.id}:${index}`}>
                <td>
                  {rule.id || '(no id)'} {rule.status === 'Disabled' ? <span class="muted small">disabled</span> : null}
                </td>
                <td>{rule.prefix === '' ? <span class="muted">whole bucket</span> : <code>{rule.prefix}</code>}</td>
                <td>{rule.actions.join('; ') || <span class="muted">see the XML</span>}</td>
                <RowAction offered={putReason === undefined} disabled={state.busy} label={`Remove rule ${rule.id || index + 1}`} onClick={() => removeRule(index)}>
                  Remove
                </RowAction>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <form key="form" class="setting-form" onSubmit={add} aria-label="Add a lifecycle rule" noValidate>
        <h3>Add a rule</h3>
        <div class="form-row">
          {field('id', 'Rule name')}
          {field('prefix', 'Prefix (empty: whole bucket)')}
          {field('expireDays', 'Expire objects after (days)', 'number')}
          {field('noncurrentDays', 'Remove noncurrent versions after (days)', 'number')}
          {field('abortDays', 'Abort unfinished uploads after (days)', 'number')}
        </div>
        <span class="guarded">
          <button class="button primary" type="submit" disabled={state.busy || putReason !== undefined || noAction} aria-describedby={putReason ? 'lifecycle-add-why' : undefined}>
            Add rule
          </button>
          {putReason ? (
            <span class="reason" id="lifecycle-add-why">
              {putReason}
            </span>
          ) : null}
        </span>
        {fromForm ? <SaveOutcome id="lifecycle-form-error" state={state} /> : null}
      </form>
      <details key="xml" class="setting-xml" open={xmlOpen} onToggle={(event) => setXmlOpen((event.currentTarget as HTMLDetailsElement).open)} onFocusCapture={() => setFromForm(false)}>
        <summary>Edit the lifecycle XML (every rule S3 accepts)</summary>
        <DocumentEditor id="lifecycle-xml" label="LifecycleConfiguration" state={state} template={lifecycleTemplate} putReason={putReason} removeReason={putReason} removable outcomeHidden={fromForm} />
      </details>
    </Card>
  );
}

interface PolicyDocument {
  Version?: string;
  Statement?: unknown[];
}

/** The stored policy (or a new one) with a statement letting anyone read the objects under `prefix`. */
export function withPublicPrefix(document: string | null | undefined, bucket: string, prefix: string): string {
  let policy: PolicyDocument = { Version: '2012-10-17', Statement: [] };
  try {
    if (document) policy = JSON.parse(document) as PolicyDocument;
  } catch {
    // the stored policy always parses; an unreadable one is replaced in the editor, not saved
  }
  const statements = Array.isArray(policy.Statement) ? policy.Statement : policy.Statement ? [policy.Statement] : [];
  const statement = { Sid: `PublicRead${prefix.replace(/[^A-Za-z0-9]/g, '') || 'Bucket'}`, Effect: 'Allow', Principal: '*', Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::${bucket}/${prefix}*`] };
  return JSON.stringify({ ...policy, Version: policy.Version ?? '2012-10-17', Statement: [...statements, statement] }, null, 2);
}

const policyTemplate = (bucket: string) => JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: ['arn:aws:iam:::user/viewer'] }, Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::${bucket}/*`] }] }, null, 2);

export function PolicySection(props: { bucket: string; permissions: Permissions | undefined }) {
  const status = usePoll(() => api<{ isPublic: boolean }>('GET', `buckets/${encodeURIComponent(props.bucket)}/policy-status`), 0, [props.bucket]);
  const [draft, setDraft] = useState<string | undefined>(undefined);
  // Once saved, the draft is the policy: its status is asked again and the "not saved" note goes.
  const state = useSetting(props.bucket, 'policy', () => {
    status.reload();
    setDraft(undefined);
  });
  const putReason = settingReason(props.permissions, 'policy', 'put');
  const [prefix, setPrefix] = useState('');
  return (
    <Card title="Bucket policy">
      {status.data?.isPublic ? (
        <div class="notice warn" role="alert" data-testid="public-warning">
          <strong>Public</strong>
          <span>This bucket's policy lets anyone, without credentials, reach objects in it. Remove or narrow the public statements to make it private again.</span>
        </div>
      ) : status.data ? (
        <p class="muted small" data-testid="policy-status">
          Not public: only the users and policies named can reach it.
        </p>
      ) : null}
      <form
        class="setting-form inline-form"
        aria-label="Make a prefix public"
        onSubmit={(event) => {
          event.preventDefault();
          setDraft(withPublicPrefix(state.document, props.bucket, prefix));
        }}
      >
        <label class="field compact grow">
          <span>Prefix to make public (read-only; empty: the whole bucket)</span>
          <input name="public-prefix" value={prefix} placeholder="e.g. public/" onInput={(event) => setPrefix((event.target as HTMLInputElement).value)} spellcheck={false} />
        </label>
        <button class="button" type="submit" disabled={putReason !== undefined}>
          Make this prefix public (read-only)
        </button>
      </form>
      {draft !== undefined ? (
        <div class="notice warn" role="status" data-testid="public-draft">
          <strong>Not saved</strong>
          <span>The editor now holds a statement that lets anyone read {prefix === '' ? 'every object in the bucket' : `objects under ${prefix}`}. Saving it makes them public.</span>
        </div>
      ) : null}
      <DocumentEditor id="policy-json" label="Policy (JSON)" state={state} template={policyTemplate(props.bucket)} putReason={putReason} removeReason={settingReason(props.permissions, 'policy', 'remove')} removable draft={draft} />
    </Card>
  );
}
