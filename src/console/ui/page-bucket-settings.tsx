/**
 * A bucket's settings (`#/settings/<bucket>`): versioning, object lock and its default retention,
 * the bucket policy (with whether it is public) and public access block, lifecycle rules, CORS,
 * tags, default encryption, the notification rules with their targets' queues, and the replication
 * rules with the replication status (settings-replication.tsx). Every change
 * goes through S3's own handler on the server; controls the session may not use are disabled
 * with the server's reason.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api';
import { Badge, Card, Empty, ErrorNotice, usePoll } from './components';
import { permissionReason, useBucketPermissions, type Permissions } from './permissions';
import { bucketHref, type BucketRow } from './page-buckets';
import { childText, DocumentEditor, elements, escapeXml, parseXml, SaveOutcome, settingReason, useSetting } from './bucket-setting';
import { LifecycleSection, PolicySection } from './settings-rules';
import { ReplicationSection } from './settings-replication';

export function BucketSettingsPage(props: { bucket: string }) {
  const { bucket } = props;
  const buckets = usePoll(() => api<{ buckets: BucketRow[] }>('GET', 'buckets'), 0, [bucket]);
  const permissions = useBucketPermissions(bucket);
  const row = buckets.data?.buckets.find((candidate) => candidate.name === bucket);
  return (
    <div class="page">
      <nav class="breadcrumbs" aria-label="Location">
        <a href="#/buckets">Buckets</a>
        <span aria-hidden="true">/</span>
        <a href={bucketHref(bucket)}>{bucket}</a>
        <span aria-hidden="true">/</span>
        <span>Settings</span>
      </nav>
      <h1>Settings of {bucket}</h1>
      <ErrorNotice error={buckets.error} />
      {buckets.data && !row ? <ErrorNotice error={{ code: 'NoSuchBucket', message: `There is no bucket ${bucket}, or your policies do not let you see it.` }} /> : null}
      {row ? (
        <>
          <VersioningSection row={row} permissions={permissions} onChanged={buckets.reload} />
          <ObjectLockSection row={row} permissions={permissions} />
          <PolicySection bucket={bucket} permissions={permissions} />
          <XmlSection bucket={bucket} name="public-access-block" title="Public access block" label="PublicAccessBlockConfiguration" permissions={permissions} template={publicAccessBlockTemplate} />
          <LifecycleSection bucket={bucket} permissions={permissions} />
          <XmlSection bucket={bucket} name="cors" title="CORS" label="CORSConfiguration" permissions={permissions} template={corsTemplate} />
          <TagsSection bucket={bucket} permissions={permissions} />
          <EncryptionSection bucket={bucket} permissions={permissions} />
          <NotificationSection bucket={bucket} />
          <ReplicationSection bucket={bucket} versioning={row.versioning} permissions={permissions} />
        </>
      ) : null}
    </div>
  );
}

const publicAccessBlockTemplate = '<PublicAccessBlockConfiguration>\n  <BlockPublicAcls>true</BlockPublicAcls>\n  <IgnorePublicAcls>true</IgnorePublicAcls>\n  <BlockPublicPolicy>true</BlockPublicPolicy>\n  <RestrictPublicBuckets>true</RestrictPublicBuckets>\n</PublicAccessBlockConfiguration>';
const corsTemplate = '<CORSConfiguration>\n  <CORSRule>\n    <AllowedOrigin>https://www.example.com</AllowedOrigin>\n    <AllowedMethod>GET</AllowedMethod>\n    <AllowedHeader>*</AllowedHeader>\n    <MaxAgeSeconds>3000</MaxAgeSeconds>\n  </CORSRule>\n</CORSConfiguration>';

function VersioningSection(props: { row: BucketRow; permissions: Permissions | undefined; onChanged: () => void }) {
  const { row } = props;
  const [error, setError] = useState<unknown>(undefined);
  const next = row.versioning === 'enabled' ? 'suspended' : 'enabled';
  const reason = permissionReason(props.permissions, 'putBucketVersioning') ?? (row.objectLock && next === 'suspended' ? 'Object lock keeps versioning enabled: S3 refuses to suspend it.' : undefined);
  const blocked = reason !== undefined;
  const change = async () => {
    setError(undefined);
    try {
      await api('PUT', `buckets/${encodeURIComponent(row.name)}/versioning`, { body: { status: next } });
      props.onChanged();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <Card title="Versioning">
      <p>
        Versioning is <Badge state={row.versioning} />
      </p>
      <span class="guarded">
        <button class="button" type="button" disabled={blocked} aria-describedby={blocked ? 'versioning-why' : undefined} onClick={change}>
          {next === 'enabled' ? 'Enable versioning' : 'Suspend versioning'}
        </button>
        {blocked ? (
          <span class="reason" id="versioning-why">
            {reason}
          </span>
        ) : null}
      </span>
      <ErrorNotice error={error} />
    </Card>
  );
}

function ObjectLockSection(props: { row: BucketRow; permissions: Permissions | undefined }) {
  if (!props.row.objectLock) {
    return (
      <Card title="Object lock">
        <p class="muted">Object lock is off. S3 turns it on only when a bucket is created: create a bucket with Object lock ticked to keep versions from deletion.</p>
      </Card>
    );
  }
  return <RetentionForm bucket={props.row.name} permissions={props.permissions} />;
}

function RetentionForm(props: { bucket: string; permissions: Permissions | undefined }) {
  const state = useSetting(props.bucket, 'object-lock');
  const putReason = settingReason(props.permissions, 'object-lock', 'put');
  const xml = parseXml(state.document);
  const storedMode = xml ? childText(xml, 'Mode') ?? '' : '';
  const storedDays = xml ? childText(xml, 'Days') ?? (childText(xml, 'Years') ? String(Number(childText(xml, 'Years')) * 365) : '') : '';
  const [mode, setMode] = useState('');
  const [days, setDays] = useState('');
  // Nothing is chosen before the stored setting arrives (it would replace the choice).
  const loading = state.document === undefined;
  useEffect(() => {
    setMode(storedMode);
    setDays(storedDays);
  }, [state.document]);
  const save = (event: Event) => {
    event.preventDefault();
    const rule = mode === '' ? '' : `<Rule><DefaultRetention><Mode>${escapeXml(mode)}</Mode><Days>${escapeXml(days)}</Days></DefaultRetention></Rule>`;
    void state.save(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled>${rule}</ObjectLockConfiguration>`);
  };
  return (
    <Card title="Object lock">
      <p>
        Object lock is <Badge state="enabled" />. New versions get the default retention below unless their upload names one.
      </p>
      <form class="setting-form inline-form" onSubmit={save} aria-label="Default retention" noValidate>
        <label class="field compact">
          <span>Default retention mode</span>
          <select name="retention-mode" value={mode} disabled={loading} onChange={(event) => setMode((event.target as HTMLSelectElement).value)}>
            <option value="">None</option>
            <option value="GOVERNANCE">GOVERNANCE</option>
            <option value="COMPLIANCE">COMPLIANCE</option>
          </select>
        </label>
        <label class="field compact">
          <span>Days</span>
          <input name="retention-days" type="number" min={1} value={days} disabled={mode === ''} onInput={(event) => setDays((event.target as HTMLInputElement).value)} />
        </label>
        <span class="guarded">
          <button class="button primary" type="submit" disabled={state.busy || loading || putReason !== undefined} aria-describedby={putReason ? 'retention-why' : undefined}>
            Save retention
          </button>
          {putReason ? (
            <span class="reason" id="retention-why">
              {putReason}
            </span>
          ) : null}
        </span>
      </form>
      <SaveOutcome id="retention-error" state={state} />
    </Card>
  );
}

/** A setting edited as its XML only (CORS, public access block). */
function XmlSection(props: { bucket: string; name: string; title: string; label: string; template: string; permissions: Permissions | undefined }) {
  const state = useSetting(props.bucket, props.name);
  return (
    <Card title={props.title}>
      {state.document === null ? <p class="muted small">Not set.</p> : null}
      <ErrorNotice error={state.loadError} />
      <DocumentEditor id={`${props.name}-xml`} label={props.label} state={state} template={props.template} putReason={settingReason(props.permissions, props.name, 'put')} removeReason={settingReason(props.permissions, props.name, 'remove')} removable />
    </Card>
  );
}

type TagRow = { key: string; value: string };

function TagsSection(props: { bucket: string; permissions: Permissions | undefined }) {
  const state = useSetting(props.bucket, 'tagging');
  const putReason = settingReason(props.permissions, 'tagging', 'put');
  const [rows, setRows] = useState<TagRow[]>([]);
  const form = useRef<HTMLFormElement>(null);
  const added = useRef(false);
  // A tag just added takes the focus, so it is typed at once (from the keyboard too).
  useEffect(() => {
    if (added.current) form.current?.querySelector<HTMLInputElement>(`[name="tag-key-${rows.length - 1}"]`)?.focus();
    added.current = false;
  }, [rows.length]);
  useEffect(() => {
    const xml = parseXml(state.document);
    setRows(xml ? elements(xml, 'Tag').map((tag) => ({ key: childText(tag, 'Key') ?? '', value: childText(tag, 'Value') ?? '' })) : []);
  }, [state.document]);
  const update = (index: number, change: Partial<TagRow>) => setRows(rows.map((row, at) => (at === index ? { ...row, ...change } : row)));
  const save = (event: Event) => {
    event.preventDefault();
    const kept = rows.filter((row) => row.key !== '');
    if (kept.length === 0) void state.remove();
    else void state.save(`<Tagging><TagSet>${kept.map((row) => `<Tag><Key>${escapeXml(row.key)}</Key><Value>${escapeXml(row.value)}</Value></Tag>`).join('')}</TagSet></Tagging>`);
  };
  return (
    <Card title="Tags">
      <form ref={form} class="setting-form" onSubmit={save} aria-label="Bucket tags">
        {rows.length === 0 ? <p class="muted small">No tags.</p> : null}
        {rows.map((row, index) => (
          <div class="form-row" key={index}>
            <label class="field compact">
              <span>Tag key {index + 1}</span>
              <input name={`tag-key-${index}`} value={row.key} readOnly={putReason !== undefined} onInput={(event) => update(index, { key: (event.target as HTMLInputElement).value })} />
            </label>
            <label class="field compact">
              <span>Tag value {index + 1}</span>
              <input name={`tag-value-${index}`} value={row.value} readOnly={putReason !== undefined} onInput={(event) => update(index, { value: (event.target as HTMLInputElement).value })} />
            </label>
            <button class="button small" type="button" disabled={putReason !== undefined} aria-label={`Remove tag ${row.key || index + 1}`} onClick={() => setRows(rows.filter((_, at) => at !== index))}>
              Remove
            </button>
          </div>
        ))}
        <div class="setting-actions">
          <button class="button" type="button" disabled={putReason !== undefined || state.document === undefined} onClick={() => {
              added.current = true;
              setRows([...rows, { key: '', value: '' }]);
            }}>
            Add tag
          </button>
          <span class="guarded">
            <button class="button primary" type="submit" disabled={state.busy || putReason !== undefined} aria-describedby={putReason ? 'tags-why' : undefined}>
              Save tags
            </button>
            {putReason ? (
              <span class="reason" id="tags-why">
                {putReason}
              </span>
            ) : null}
          </span>
        </div>
        <SaveOutcome id="tags-error" state={state} />
      </form>
    </Card>
  );
}

interface KmsKey {
  keyId: string;
  origin?: string;
}

function EncryptionSection(props: { bucket: string; permissions: Permissions | undefined }) {
  const state = useSetting(props.bucket, 'encryption');
  const keys = usePoll(() => api<{ keys: KmsKey[] }>('GET', 'admin/v4/kms/key/list'), 0, []);
  const putReason = settingReason(props.permissions, 'encryption', 'put');
  const xml = parseXml(state.document);
  const [algorithm, setAlgorithm] = useState('');
  const [keyId, setKeyId] = useState('');
  useEffect(() => {
    setAlgorithm(xml ? childText(xml, 'SSEAlgorithm') ?? '' : '');
    setKeyId(xml ? childText(xml, 'KMSMasterKeyID') ?? '' : '');
  }, [state.document]);
  const kmsReason = keys.error ? `No KMS key list: ${keys.error.message}` : undefined;
  const save = (event: Event) => {
    event.preventDefault();
    if (algorithm === '') {
      void state.remove();
      return;
    }
    const key = algorithm === 'aws:kms' && keyId !== '' ? `<KMSMasterKeyID>${escapeXml(keyId)}</KMSMasterKeyID>` : '';
    void state.save(`<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>${escapeXml(algorithm)}</SSEAlgorithm>${key}</ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`);
  };
  return (
    <Card title="Default encryption">
      <form class="setting-form inline-form" onSubmit={save} aria-label="Default encryption">
        <label class="field compact">
          <span>New objects are encrypted with</span>
          <select name="sse-algorithm" value={algorithm} disabled={state.document === undefined} onChange={(event) => setAlgorithm((event.target as HTMLSelectElement).value)}>
            <option value="">Nothing (no default)</option>
            <option value="AES256">SSE-S3 (AES256)</option>
            <option value="aws:kms" disabled={kmsReason !== undefined}>
              SSE-KMS (a KMS key)
            </option>
          </select>
        </label>
        {algorithm === 'aws:kms' ? (
          <label class="field compact">
            <span>KMS key</span>
            <select name="kms-key" value={keyId} onChange={(event) => setKeyId((event.target as HTMLSelectElement).value)}>
              <option value="">The default key</option>
              {(keys.data?.keys ?? []).map((key) => (
                <option key={key.keyId} value={key.keyId}>
                  {key.keyId}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <span class="guarded">
          <button class="button primary" type="submit" disabled={state.busy || putReason !== undefined} aria-describedby={putReason ? 'encryption-why' : undefined}>
            Save encryption
          </button>
          {putReason ? (
            <span class="reason" id="encryption-why">
              {putReason}
            </span>
          ) : null}
        </span>
      </form>
      {kmsReason ? <p class="reason">SSE-KMS is not offered. {kmsReason}</p> : null}
      <SaveOutcome id="encryption-error" state={state} />
    </Card>
  );
}

interface EventTarget {
  arn: string;
  type: string;
  queued: number;
  sent: number;
  failed: number;
  dropped: number;
  lastError: string | null;
}

function NotificationSection(props: { bucket: string }) {
  const state = useSetting(props.bucket, 'notification');
  const targets = usePoll(() => api<{ targets: EventTarget[] }>('GET', 'admin/v4/event/targets'), 0, []);
  const xml = parseXml(state.document);
  const rules = xml
    ? ['QueueConfiguration', 'TopicConfiguration', 'CloudFunctionConfiguration'].flatMap((kind) =>
        elements(xml, kind).map((rule) => ({
          id: childText(rule, 'Id') ?? '',
          target: childText(rule, 'Queue') ?? childText(rule, 'Topic') ?? childText(rule, 'CloudFunction') ?? '',
          events: elements(rule, 'Event').map((event) => event.textContent ?? ''),
          filters: elements(rule, 'FilterRule').map((filter) => `${childText(filter, 'Name') ?? ''}=${childText(filter, 'Value') ?? ''}`),
        })),
      )
    : [];
  return (
    <Card title="Notifications">
      <ErrorNotice error={state.loadError} />
      {state.document !== undefined && rules.length === 0 ? <Empty>No notification rules (set them with PutBucketNotificationConfiguration).</Empty> : null}
      {rules.length > 0 ? (
        <table class="table" aria-label="Notification rules">
          <thead>
            <tr>
              <th>Rule</th>
              <th>Target</th>
              <th>Events</th>
              <th class="hide-narrow">Filter</th>
            </tr>
          </thead>
          <tbody>
            {rules.map((rule, index) => (
              <tr key={index}>
                <td>{rule.id || '(no id)'}</td>
                <td class="small">{rule.target}</td>
                <td class="small">{rule.events.join(', ')}</td>
                <td class="hide-narrow small">{rule.filters.join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <h3>Event targets</h3>
      {targets.error ? <p class="reason">The targets' queues are not shown: {targets.error.message}</p> : null}
      {targets.data && targets.data.targets.length === 0 ? <p class="muted small">No event targets are configured on this node (SVC_NOTIFY_*).</p> : null}
      {targets.data && targets.data.targets.length > 0 ? (
        <table class="table" aria-label="Event targets">
          <thead>
            <tr>
              <th>Target</th>
              <th class="num">Queued</th>
              <th class="num hide-narrow">Sent</th>
              <th class="num hide-narrow">Failed</th>
              <th class="num">Dropped</th>
              <th class="hide-narrow">Last error</th>
            </tr>
          </thead>
          <tbody>
            {targets.data.targets.map((target) => (
              <tr key={target.arn}>
                <td class="small">{target.arn}</td>
                <td class="num">{target.queued}</td>
                <td class="num hide-narrow">{target.sent}</td>
                <td class="num hide-narrow">{target.failed}</td>
                <td class="num">{target.dropped}</td>
                <td class="hide-narrow small">{target.lastError ?? '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Card>
  );
}
