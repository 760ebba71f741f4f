/**
 * The Users page's audit section: this node's newest audit entries (who did what, on what, how it
 * ended), filtered by outcome, with the node's audit counts. Needs `admin:Audit`.
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { Badge, Card, Empty, ErrorNotice, usePoll } from './components';
import { when } from './format';

interface AuditRow {
  time: string;
  requestId: string;
  surface: string;
  api: string;
  principal: { kind: string; accessKey?: string };
  resource: string;
  outcome: string;
  httpStatus: number;
  errorCode?: string;
}

interface AuditAnswer {
  stats: { recorded: number; webhook: boolean; queued: number; delivered: number; dropped: number; quarantined: number; lastError?: string };
  entries: AuditRow[];
}

const outcomes = ['', 'allowed', 'denied', 'error'] as const;

export function AuditSection() {
  const [outcome, setOutcome] = useState<string>('');
  const audit = usePoll(() => api<AuditAnswer>('GET', 'audit', { query: { limit: '50', outcome: outcome || undefined } }), 10_000, [outcome]);
  const filter = (
    <label class="check">
      Outcome{' '}
      <select aria-label="Filter by outcome" value={outcome} onChange={(event) => setOutcome((event.target as HTMLSelectElement).value)}>
        {outcomes.map((value) => (
          <option key={value} value={value}>
            {value || 'all'}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <Card title="Audit (this node)" actions={filter}>
      <ErrorNotice error={audit.error} />
      {audit.data ? <AuditCounts stats={audit.data.stats} /> : null}
      {audit.data && audit.data.entries.length === 0 ? <Empty>No audited requests{outcome ? ` with outcome ${outcome}` : ''} since this node started.</Empty> : null}
      {audit.data && audit.data.entries.length > 0 ? <AuditTable entries={audit.data.entries} /> : null}
    </Card>
  );
}

function AuditCounts(props: { stats: AuditAnswer['stats'] }) {
  const { stats } = props;
  return (
    <p class="muted">
      {stats.recorded} recorded since start · {stats.webhook ? `webhook: ${stats.queued} queued, ${stats.delivered} delivered, ${stats.dropped} dropped${stats.quarantined > 0 ? `, ${stats.quarantined} segment files quarantined` : ''}` : 'no webhook configured'}
      {stats.webhook && stats.lastError ? ` · last error: ${stats.lastError}` : ''}
    </p>
  );
}

function AuditTable(props: { entries: AuditRow[] }) {
  return (
    <table class="table audit-table">
      <thead>
        <tr>
          <th>Time</th>
          <th>Principal</th>
          <th>API</th>
          <th class="hide-narrow">Resource</th>
          <th>Outcome</th>
        </tr>
      </thead>
      <tbody>
        {props.entries.map((entry) => (
          <tr key={entry.requestId}>
            <td class="nowrap" title={entry.requestId}>{when(entry.time)}</td>
            <td class="break">
              <span class="strong">{entry.principal.accessKey ?? entry.principal.kind}</span>
              {entry.principal.accessKey ? <span class="muted"> {entry.principal.kind}</span> : null}
            </td>
            <td class="break">
              {entry.api} <span class="muted">{entry.surface}</span>
            </td>
            <td class="break hide-narrow">{entry.resource || <span class="muted">–</span>}</td>
            <td class="nowrap">
              <Badge state={entry.outcome} /> <span class="muted">{entry.httpStatus}{entry.errorCode ? ` ${entry.errorCode}` : ''}</span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
