/**
 * The bucket settings page's replication sections: the rules read from GetBucketReplication (id,
 * status, priority, filter, destination, delete-marker and existing-object replication), a form
 * that adds or edits the common rule and the XML for every other, saved through S3's own
 * PutBucketReplication handler; the bucket's remote targets to choose from (never with a secret);
 * the remote targets themselves, added (endpoint, credentials, bucket: the admin API checks them
 * first) and removed, the secret sent once and never shown again; and the replication status of
 * the deployment (each target's queue summed and per node, resyncs with a progress bar, polled
 * once a second while one runs) with a Resync button. Controls the session may not use are not
 * drawn; the server's reason is shown instead.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api';
import { ActionsHead, Badge, Card, ConfirmDialog, Empty, ErrorNotice, ProgressBar, RowAction, usePoll } from './components';
import { may, permissionReason, type Permissions } from './permissions';
import { DocumentEditor, elements, escapeXml, parseXml, SaveOutcome, settingReason, useSetting, withElement, withoutElement } from './bucket-setting';

interface RemoteTarget {
  arn: string;
  endpoint: string;
  targetBucket: string;
  accessKey: string;
  region: string;
}

interface TargetStatus {
  arn: string;
  endpoint: string;
  targetBucket: string;
  queued: number;
  oldestAgeSeconds: number;
  completed: number;
  failed: number;
  lastError: string | null;
}

interface Resync {
  id: string;
  bucketArn: string;
  status: string;
  keys: number;
  queued: number;
  afterKey?: string;
  error?: string;
  node?: string;
}

interface ReplicationStatus {
  targets: TargetStatus[];
  resyncs: Resync[];
  nodes?: { node: string; error?: string; targets?: TargetStatus[] }[];
}

/** One node's row: a target's queue there, or why the node did not answer. */
interface NodeRow {
  node: string;
  error?: string;
  target?: TargetStatus;
}

interface RuleRow {
  id: string;
  priority: string;
  enabled: boolean;
  filter: string;
  prefix: string;
  destination: string;
  deleteMarkers: boolean;
  existing: boolean;
  /** Only an ID, priority, status, prefix, the two switches and a destination bucket: the form can edit it. */
  simple: boolean;
}

const child = (node: Element | undefined, name: string): Element | undefined => (node ? [...node.children].find((element) => element.localName === name) : undefined);
const textOf = (node: Element | undefined, name: string): string | undefined => child(node, name)?.textContent ?? undefined;
const enabledOf = (node: Element, name: string): boolean => textOf(child(node, name), 'Status') === 'Enabled';

function rulesOf(document: string | null | undefined): RuleRow[] {
  const xml = parseXml(document);
  if (!xml) return [];
  return elements(xml, 'Rule').map((rule) => {
    const filter = child(rule, 'Filter');
    const and = child(filter, 'And');
    const prefix = textOf(and ?? filter, 'Prefix') ?? textOf(rule, 'Prefix') ?? '';
    const tags = [...(and ?? filter)?.children ?? []].filter((element) => element.localName === 'Tag').map((tag) => `${textOf(tag, 'Key') ?? ''}=${textOf(tag, 'Value') ?? ''}`);
    const destination = child(rule, 'Destination');
    return {
      id: textOf(rule, 'ID') ?? '',
      priority: textOf(rule, 'Priority') ?? '0',
      enabled: textOf(rule, 'Status') === 'Enabled',
      filter: [prefix === '' ? '' : `prefix ${prefix}`, ...tags.map((tag) => `tag ${tag}`)].filter(Boolean).join(', '),
      prefix,
      destination: textOf(destination, 'Bucket') ?? '',
      deleteMarkers: enabledOf(rule, 'DeleteMarkerReplication'),
      existing: enabledOf(rule, 'ExistingObjectReplication'),
      simple: tags.length === 0 && child(rule, 'SourceSelectionCriteria') === undefined && destination?.children.length === 1,
    };
  });
}

interface RuleForm {
  id: string;
  priority: string;
  prefix: string;
  destination: string;
  enabled: boolean;
  deleteMarkers: boolean;
  existing: boolean;
}

const emptyForm: RuleForm = { id: '', priority: '1', prefix: '', destination: '', enabled: true, deleteMarkers: true, existing: true };
const status = (on: boolean) => `<Status>${on ? 'Enabled' : 'Disabled'}</Status>`;

function ruleXml(form: RuleForm): string {
  return `<Rule><ID>${escapeXml(form.id)}</ID><Priority>${escapeXml(form.priority)}</Priority>${status(form.enabled)}<Filter><Prefix>${escapeXml(form.prefix)}</Prefix></Filter><DeleteMarkerReplication>${status(form.deleteMarkers)}</DeleteMarkerReplication><ExistingObjectReplication>${status(form.existing)}</ExistingObjectReplication><Destination><Bucket>${escapeXml(form.destination)}</Bucket></Destination></Rule>`;
}

const template = `<ReplicationConfiguration>\n  <Role></Role>\n  <Rule>\n    <ID>to-dr</ID>\n    <Priority>1</Priority>\n    <Status>Enabled</Status>\n    <Filter><Prefix></Prefix></Filter>\n    <DeleteMarkerReplication><Status>Enabled</Status></DeleteMarkerReplication>\n    <ExistingObjectReplication><Status>Enabled</Status></ExistingObjectReplication>\n    <Destination><Bucket>arn:aws:s3:::target-bucket</Bucket></Destination>\n  </Rule>\n</ReplicationConfiguration>`;

/** A destination as the user knows it: the target's endpoint and bucket when it is one of the bucket's targets. */
function destinationName(arn: string, targets: RemoteTarget[] | undefined): string {
  const target = targets?.find((candidate) => candidate.arn === arn || `arn:aws:s3:::${candidate.targetBucket}` === arn);
  return target ? `${target.targetBucket} at ${target.endpoint}` : arn;
}

/** The bucket's remote targets, when the session may list them (admin:GetBucketTarget). */
function useRemoteTargets(bucket: string, permissions: Permissions | undefined): { targets: RemoteTarget[] | undefined; reason: string | undefined; reload: () => void } {
  const allowed = may(permissions, 'getBucketTarget').allowed;
  const listed = usePoll<{ targets: RemoteTarget[] } | undefined>(() => (allowed ? api<{ targets: RemoteTarget[] }>('GET', 'admin/v4/replication/target/list', { query: { bucket } }) : Promise.resolve(undefined)), 0, [bucket, allowed]);
  return { targets: listed.data?.targets, reason: permissions === undefined ? undefined : allowed ? listed.error?.message : permissionReason(permissions, 'getBucketTarget'), reload: listed.reload };
}

export function ReplicationSection(props: { bucket: string; versioning: string; permissions: Permissions | undefined }) {
  const state = useSetting(props.bucket, 'replication');
  const getReason = settingReason(props.permissions, 'replication', 'get');
  const putReason = settingReason(props.permissions, 'replication', 'put');
  const { targets, reason: targetsReason, reload: reloadTargets } = useRemoteTargets(props.bucket, props.permissions);
  const rules = rulesOf(state.document);
  const [form, setForm] = useState<RuleForm>(emptyForm);
  const [editing, setEditing] = useState<number | undefined>(undefined);
  const [fromForm, setFromForm] = useState(false);
  const [xmlOpen, setXmlOpen] = useState(false);
  // The first target is the destination offered until the user picks another.
  useEffect(() => {
    if (form.destination === '' && targets?.[0]) setForm({ ...form, destination: targets[0].arn });
  }, [targets]);
  const set = (change: Partial<RuleForm>) => setForm({ ...form, ...change });
  const submit = async (event: Event) => {
    event.preventDefault();
    setFromForm(true);
    const rest = editing === undefined ? state.document : withoutElement(state.document!, 'Rule', editing);
    if (await state.save(withElement(rest, 'ReplicationConfiguration', ruleXml(form)))) {
      setForm({ ...emptyForm, destination: form.destination });
      setEditing(undefined);
    }
  };
  const edit = (index: number) => {
    const rule = rules[index]!;
    setEditing(index);
    setForm({ id: rule.id, priority: rule.priority, prefix: rule.prefix, destination: rule.destination, enabled: rule.enabled, deleteMarkers: rule.deleteMarkers, existing: rule.existing });
  };
  const removeRule = (index: number) => {
    setFromForm(true);
    const rest = withoutElement(state.document!, 'Rule', index);
    void (rest === undefined ? state.remove() : state.save(rest));
  };
  const destinations = targets ?? [];
  return (
    <>
      <Card title="Replication rules" scrollable>
        {getReason ? <p class="reason">The rules are not shown. {getReason}</p> : <ErrorNotice error={state.loadError} />}
        {state.document === null ? <Empty key="empty">No replication rules: new versions stay on this deployment only.</Empty> : null}
        {rules.length > 0 ? (
          <table key="rules" class="table" aria-label="Replication rules">
            <thead>
              <tr>
                <th>Rule</th>
                <th class="num">Priority</th>
                <th>Filter</th>
                <th>Destination</th>
                <th class="hide-narrow">Delete markers</th>
                <th class="hide-narrow">Existing objects</th>
                <ActionsHead />
              </tr>
            </thead>
            <tbody>
              {rules.map((rule, index) => (
                <tr key={`${rule.id}:${index}`}>
                  <td>
                    {rule.id} <Badge state={rule.enabled ? 'enabled' : 'disabled'} />
                  </td>
                  <td class="num">{rule.priority}</td>
                  <td>{rule.filter === '' ? <span class="muted">whole bucket</span> : <code>{rule.filter}</code>}</td>
                  <td class="small">{destinationName(rule.destination, targets)}</td>
                  <td class="hide-narrow">
                    <Badge state={rule.deleteMarkers ? 'enabled' : 'disabled'} />
                  </td>
                  <td class="hide-narrow">
                    <Badge state={rule.existing ? 'enabled' : 'disabled'} />
                  </td>
                  <td class="actions-col">
                    {putReason === undefined ? (
                      <>
                        {rule.simple ? (
                          <button class="button small" type="button" disabled={state.busy} aria-label={`Edit rule ${rule.id}`} onClick={() => edit(index)}>
                            Edit
                          </button>
                        ) : null}{' '}
                        <button class="button small danger" type="button" disabled={state.busy} aria-label={`Remove rule ${rule.id}`} onClick={() => removeRule(index)}>
                          Remove
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {targets && targets.length === 0 ? <p class="muted small">This bucket has no remote target: add one under Remote targets before a rule can send anything.</p> : null}
        {props.versioning !== 'enabled' ? <p class="reason">Versioning must be enabled on this bucket before S3 takes a replication rule.</p> : null}
        {putReason !== undefined ? (
          <p class="reason" id="replication-put-why">
            You cannot change the rules. {putReason}
          </p>
        ) : (
          <>
            <form key="form" class="setting-form" onSubmit={submit} aria-label={editing === undefined ? 'Add a replication rule' : 'Edit a replication rule'} noValidate>
              <h3>{editing === undefined ? 'Add a rule' : `Edit rule ${rules[editing]?.id ?? ''}`}</h3>
              <div class="form-row">
                <label class="field compact">
                  <span>Rule ID</span>
                  <input name="replication-id" value={form.id} onInput={(event) => set({ id: (event.target as HTMLInputElement).value })} />
                </label>
                <label class="field compact">
                  <span>Priority</span>
                  <input name="replication-priority" type="number" min={0} value={form.priority} onInput={(event) => set({ priority: (event.target as HTMLInputElement).value })} />
                </label>
                <label class="field compact">
                  <span>Prefix (empty: whole bucket)</span>
                  <input name="replication-prefix" value={form.prefix} onInput={(event) => set({ prefix: (event.target as HTMLInputElement).value })} />
                </label>
                <label class="field compact">
                  <span>Destination</span>
                  {destinations.length > 0 ? (
                    <select name="replication-destination" value={form.destination} onChange={(event) => set({ destination: (event.target as HTMLSelectElement).value })}>
                      {destinations.some((target) => target.arn === form.destination) || form.destination === '' ? null : <option value={form.destination}>{form.destination}</option>}
                      {destinations.map((target) => (
                        <option key={target.arn} value={target.arn}>
                          {target.targetBucket} at {target.endpoint}
                        </option>
                      ))}
                    </select>
                  ) : (
                    <input name="replication-destination" value={form.destination} placeholder="arn:aws:s3:::target-bucket" onInput={(event) => set({ destination: (event.target as HTMLInputElement).value })} />
                  )}
                </label>
              </div>
              <div class="form-row">
                <label class="check">
                  <input type="checkbox" checked={form.enabled} onChange={() => set({ enabled: !form.enabled })} /> Enabled
                </label>
                <label class="check">
                  <input type="checkbox" checked={form.deleteMarkers} onChange={() => set({ deleteMarkers: !form.deleteMarkers })} /> Replicate delete markers
                </label>
                <label class="check">
                  <input type="checkbox" checked={form.existing} onChange={() => set({ existing: !form.existing })} /> Replicate existing objects (a resync starts when saved)
                </label>
              </div>
              <div class="setting-actions">
                <button class="button primary" type="submit" disabled={state.busy || state.document === undefined || form.destination === ''}>
                  {editing === undefined ? 'Add rule' : 'Save rule'}
                </button>
                {editing !== undefined ? (
                  <button class="button" type="button" onClick={() => (setEditing(undefined), setForm({ ...emptyForm, destination: form.destination }))}>
                    Cancel
                  </button>
                ) : null}
              </div>
              {fromForm ? <SaveOutcome id="replication-form-error" state={state} /> : null}
            </form>
            <details key="xml" class="setting-xml" open={xmlOpen} onToggle={(event) => setXmlOpen((event.currentTarget as HTMLDetailsElement).open)} onFocusCapture={() => setFromForm(false)}>
              <summary>Edit the replication XML (tag filters, storage class, SSE-KMS)</summary>
              <DocumentEditor id="replication-xml" label="ReplicationConfiguration" state={state} template={template} putReason={putReason} removeReason={putReason} removable outcomeHidden={fromForm} />
            </details>
          </>
        )}
      </Card>
      <RemoteTargetsSection bucket={props.bucket} versioning={props.versioning} permissions={props.permissions} targets={targets} reason={targetsReason} reload={reloadTargets} />
      <ReplicationStatusSection bucket={props.bucket} permissions={props.permissions} hasRules={rules.length > 0} />
    </>
  );
}

/** Each target's queue, summed and per node, and the resyncs; Resync with admin:SetBucketTarget. Polled every 3 s while open. */
function ReplicationStatusSection(props: { bucket: string; permissions: Permissions | undefined; hasRules: boolean }) {
  const allowed = may(props.permissions, 'getBucketTarget').allowed;
  const resyncReason = permissionReason(props.permissions, 'setBucketTarget');
  // Once a second while a resync runs (its progress bar moves), every 3 s otherwise.
  const [running, setRunning] = useState(false);
  const report = usePoll<ReplicationStatus | undefined>(() => (allowed ? api<ReplicationStatus>('GET', 'admin/v4/replication/status', { query: { bucket: props.bucket } }) : Promise.resolve(undefined)), running ? resyncPollMs : statusPollMs, [props.bucket, allowed]);
  useEffect(() => setRunning((report.data?.resyncs ?? []).some((run) => run.status === 'running')), [report.data]);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const resync = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', 'admin/v4/replication/resync', { query: { bucket: props.bucket } });
      report.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const data = report.data;
  const rows = (data?.nodes ?? []).flatMap((node): NodeRow[] => (node.error !== undefined ? [{ node: node.node, error: node.error }] : (node.targets ?? []).map((target) => ({ node: node.node, target }))));
  return (
    <Card title="Replication status" scrollable>
      {!allowed ? <p class="reason">The replication status is not shown. {permissionReason(props.permissions, 'getBucketTarget')}</p> : <ErrorNotice error={report.error} />}
      {data && data.targets.length === 0 ? <p class="muted small">No remote target, no queue.</p> : null}
      {data && data.targets.length > 0 ? (
        <table class="table" aria-label="Replication queues">
          <thead>
            <tr>
              <th>Target</th>
              <th class="num">Pending</th>
              <th class="num hide-narrow">Oldest</th>
              <th class="num">Completed</th>
              <th class="num">Failed</th>
              <th class="hide-narrow">Last error</th>
            </tr>
          </thead>
          <tbody>
            {data.targets.map((target) => (
              <tr key={target.arn}>
                <td class="small">
                  {target.targetBucket} at {target.endpoint}
                </td>
                <td class="num">{target.queued}</td>
                <td class="num hide-narrow">{target.queued > 0 ? `${target.oldestAgeSeconds.toFixed(1)} s` : '–'}</td>
                <td class="num">{target.completed}</td>
                <td class="num">{target.failed}</td>
                <td class="hide-narrow small">{target.lastError ?? '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {rows.length > 0 ? (
        <table class="table" aria-label="Replication queues per node">
          <thead>
            <tr>
              <th>Node</th>
              <th>Target</th>
              <th class="num">Pending</th>
              <th class="num">Completed</th>
              <th class="num">Failed</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) =>
              !row.target ? (
                <tr key={index}>
                  <td class="small">{row.node}</td>
                  <td colSpan={4} class="small">
                    <Badge state="offline" /> {row.error}
                  </td>
                </tr>
              ) : (
                <tr key={index}>
                  <td class="small">{row.node}</td>
                  <td class="small">{row.target.targetBucket}</td>
                  <td class="num">{row.target.queued}</td>
                  <td class="num">{row.target.completed}</td>
                  <td class="num">{row.target.failed}</td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      ) : null}
      {(data?.resyncs ?? []).map((run) => (
        <ResyncProgress key={run.id} run={run} targets={data?.targets ?? []} />
      ))}
      {allowed && resyncReason === undefined ? (
        <div class="setting-actions">
          <button class="button" type="button" disabled={busy || !props.hasRules} onClick={() => void resync()}>
            Resync existing objects
          </button>
          {!props.hasRules ? <span class="reason">A resync needs a replication rule.</span> : null}
        </div>
      ) : allowed ? (
        <p class="reason">You cannot start a resync. {resyncReason}</p>
      ) : null}
      <ErrorNotice error={error} />
    </Card>
  );
}

const statusPollMs = 3000;
const resyncPollMs = 1000;

/**
 * A resync's progress: the walk's counts, then how much of what it queued the destination has
 * taken (queued less what still waits in the destination's queue, summed over the nodes). While
 * the walk runs the total is not known yet, and the bar says so.
 */
function ResyncProgress(props: { run: Resync; targets: TargetStatus[] }) {
  const { run } = props;
  const target = props.targets.find((candidate) => candidate.arn === run.bucketArn || `arn:aws:s3:::${candidate.targetBucket}` === run.bucketArn);
  const pending = Math.min(run.queued, target?.queued ?? 0);
  const replicated = run.queued - pending;
  const value = run.queued === 0 ? (run.status === 'running' ? 0 : 100) : (replicated / run.queued) * 100;
  const name = target ? `${target.targetBucket} at ${target.endpoint}` : run.bucketArn;
  return (
    <div class="resync">
      <p class="small" data-testid="resync">
        Resync to {name}: <Badge state={run.status} /> {run.keys} keys walked, {run.queued} versions queued, {replicated} replicated{pending > 0 ? `, ${pending} waiting` : ''}
        {run.status === 'running' && run.afterKey ? `, up to ${run.afterKey}` : ''}
        {run.error ? ` (${run.error})` : ''}
      </p>
      <ProgressBar value={value} label={`Resync to ${name}: ${replicated} of ${run.queued} versions replicated${run.status === 'running' ? ' so far, the walk goes on' : ''}`} tone={run.status === 'failed' ? 'bad' : 'ok'} />
    </div>
  );
}

interface TargetForm {
  endpoint: string;
  targetBucket: string;
  accessKey: string;
  secretKey: string;
  region: string;
}

const emptyTarget: TargetForm = { endpoint: '', targetBucket: '', accessKey: '', secretKey: '', region: '' };

/**
 * The bucket's remote targets: listed (never with a secret), added from a form (the admin API
 * checks the endpoint, the credentials and the target bucket's versioning first, and its named
 * refusal is shown beside the form), removed after a confirmation (refused while a rule names the
 * target). The secret is sent once: the field is emptied when the target is saved.
 */
function RemoteTargetsSection(props: { bucket: string; versioning: string; permissions: Permissions | undefined; targets: RemoteTarget[] | undefined; reason: string | undefined; reload: () => void }) {
  const changeReason = permissionReason(props.permissions, 'setBucketTarget');
  const [form, setForm] = useState<TargetForm>(emptyTarget);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [added, setAdded] = useState<string | undefined>(undefined);
  const [removing, setRemoving] = useState<RemoteTarget | undefined>(undefined);
  const [removeError, setRemoveError] = useState<unknown>(undefined);
  const set = (change: Partial<TargetForm>) => setForm({ ...form, ...change });
  const field = (name: keyof TargetForm) => (event: Event) => set({ [name]: (event.target as HTMLInputElement).value } as Partial<TargetForm>);
  const add = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setAdded(undefined);
    try {
      const body = { bucket: props.bucket, endpoint: form.endpoint.trim(), targetBucket: form.targetBucket.trim(), accessKey: form.accessKey, secretKey: form.secretKey, ...(form.region.trim() === '' ? {} : { region: form.region.trim() }) };
      const answer = await api<{ target: RemoteTarget }>('POST', 'admin/v4/replication/target/add', { body });
      setForm(emptyTarget);
      setAdded(`${answer.target.targetBucket} at ${answer.target.endpoint}`);
      props.reload();
    } catch (caught) {
      setError(caught);
      // The secret is not kept in the page after it was sent, taken or not.
      setForm((current) => ({ ...current, secretKey: '' }));
    } finally {
      setBusy(false);
    }
  };
  const remove = async (target: RemoteTarget) => {
    setBusy(true);
    setRemoveError(undefined);
    try {
      await api('POST', 'admin/v4/replication/target/remove', { query: { bucket: props.bucket, arn: target.arn } });
      setRemoving(undefined);
      props.reload();
    } catch (caught) {
      setRemoveError(caught);
    } finally {
      setBusy(false);
    }
  };
  const targets = props.targets ?? [];
  return (
    <Card title="Remote targets" scrollable>
      {props.reason ? <p class="reason">The remote targets are not shown. {props.reason}</p> : null}
      {props.targets && targets.length === 0 ? <Empty>No remote target yet.</Empty> : null}
      {targets.length > 0 ? (
        <table class="table" aria-label="Remote targets">
          <thead>
            <tr>
              <th>Bucket</th>
              <th>Endpoint</th>
              <th class="hide-narrow">Access key</th>
              <th class="hide-narrow">Region</th>
              <ActionsHead />
            </tr>
          </thead>
          <tbody>
            {targets.map((target) => (
              <tr key={target.arn}>
                <td class="break">{target.targetBucket}</td>
                <td class="small break">{target.endpoint}</td>
                <td class="hide-narrow small">{target.accessKey}</td>
                <td class="hide-narrow small">{target.region}</td>
                <RowAction offered={changeReason === undefined} label={`Remove target ${target.targetBucket} at ${target.endpoint}`} onClick={() => (setRemoveError(undefined), setRemoving(target))}>
                  Remove
                </RowAction>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {changeReason !== undefined ? (
        <p class="reason">You cannot add or remove remote targets. {changeReason}</p>
      ) : (
        <form class="setting-form" onSubmit={add} aria-label="Add a remote target" noValidate>
          <h3>Add a remote target</h3>
          {props.versioning !== 'enabled' ? <p class="reason">Versioning must be enabled on this bucket before it takes a remote target.</p> : null}
          <div class="form-row">
            <label class="field compact">
              <span>Endpoint</span>
              <input name="target-endpoint" value={form.endpoint} placeholder="https://dr.example.net:9000" autocomplete="off" spellcheck={false} onInput={field('endpoint')} />
            </label>
            <label class="field compact">
              <span>Target bucket</span>
              <input name="target-bucket" value={form.targetBucket} autocomplete="off" spellcheck={false} onInput={field('targetBucket')} />
            </label>
            <label class="field compact">
              <span>Region (empty: us-east-1)</span>
              <input name="target-region" value={form.region} autocomplete="off" spellcheck={false} onInput={field('region')} />
            </label>
          </div>
          <div class="form-row">
            <label class="field compact">
              <span>Access key</span>
              <input name="target-access-key" value={form.accessKey} autocomplete="off" spellcheck={false} onInput={field('accessKey')} />
            </label>
            <label class="field compact">
              <span>Secret key</span>
              <input name="target-secret-key" type="password" value={form.secretKey} autocomplete="new-password" onInput={field('secretKey')} />
            </label>
          </div>
          <div class="setting-actions">
            <button class="button primary" type="submit" disabled={busy || form.endpoint.trim() === '' || form.targetBucket.trim() === '' || form.accessKey === '' || form.secretKey === ''}>
              {busy ? 'Checking the target…' : 'Add target'}
            </button>
          </div>
          <ErrorNotice error={error} />
          {added ? (
            <p class="notice ok" role="status">
              Target {added} added. Its secret key is kept sealed on the server and is not shown again.
            </p>
          ) : null}
        </form>
      )}
      {removing ? (
        <ConfirmDialog title={`Remove the target ${removing.targetBucket}?`} confirmLabel="Remove target" danger busy={busy} error={removeError} onConfirm={() => void remove(removing)} onCancel={() => setRemoving(undefined)}>
          <p>
            Changes of {props.bucket} stop going to {removing.targetBucket} at {removing.endpoint}, and what waits in its queue is dropped. A target a replication rule names is refused: remove the rule first.
          </p>
        </ConfirmDialog>
      ) : null}
    </Card>
  );
}
