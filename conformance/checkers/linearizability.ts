/**
 * A linearizability checker for histories of S3 operations on single keys.
 *
 * A history is what concurrent clients observed: each operation with the time it was invoked,
 * the time its answer arrived (or none: the client never learned the outcome) and the answer. It
 * is linearizable when every operation can be placed at one instant between its invocation and
 * its answer so that the answers are those of a sequential object (the model). Keys are
 * independent objects, so a history is split by key and each key is checked on its own (a
 * history is linearizable exactly when each key's part is).
 *
 * The search is Wing and Gong's, with Lowe's memoisation: walk the invocations in time order,
 * try to linearize each pending operation at the current point, backtrack when an answer arrives
 * for an operation not yet placed, and never revisit a (placed set, model state) pair. An
 * operation whose outcome is unknown answers at infinity: it may be placed anywhere after its
 * invocation, and placing it last is the same as its never having happened, since nothing
 * observes it afterwards.
 *
 * Two models: a register (an unversioned bucket: the key holds one body or nothing) and a
 * versioned register (a versioned bucket: a stack of versions and delete markers). Values are
 * opaque strings (a body's MD5, which is its ETag for a single-part PUT): a workload must write a
 * distinct body in every PUT.
 *
 * Also a list-after-write check: a listing invoked after a PUT of a key was acknowledged includes
 * the key unless a DELETE of it could have happened before the listing ended, and a listing never
 * names a key no PUT was invoked for before the listing ended.
 */

/** What a client asked. `ifMatch`/`ifNoneMatch` are the conditional-request headers. */
export type KeyInput =
  | { op: 'put'; value: string; ifNoneMatch?: '*'; ifMatch?: string }
  | { op: 'get' }
  | { op: 'head' }
  | { op: 'delete'; ifMatch?: string }
  | { op: 'getVersion'; versionId: string }
  | { op: 'deleteVersion'; versionId: string };

/**
 * What the server answered. `absent` is 404 (NoSuchKey, NoSuchVersion, or a delete marker as the
 * latest version); `precondition` is 412; `noEffect` is a refusal that by contract changes
 * nothing (a named error such as ErasureWriteQuorum or ConditionalRequestConflict). An unknown
 * outcome (connection lost, timeout, 500) is no answer at all: `output` undefined.
 */
export type KeyOutput =
  | { kind: 'ok'; value?: string; versionId?: string }
  | { kind: 'absent' }
  | { kind: 'precondition' }
  | { kind: 'noEffect'; name: string };

export interface HistoryOperation {
  key: string;
  /** Client that issued it (for reports only). */
  client: number;
  input: KeyInput;
  /** undefined: the outcome is unknown (the operation may or may not have taken effect). */
  output: KeyOutput | undefined;
  invokeMs: number;
  /** undefined when no answer arrived. */
  completeMs: number | undefined;
}

export interface ListingOperation {
  client: number;
  prefix: string;
  keys: string[];
  invokeMs: number;
  completeMs: number;
}

/** A sequential object: `step` answers whether `output` is what `input` gives in `state`, and the state after. */
export interface Model<S> {
  name: string;
  init(): S;
  step(state: S, input: KeyInput, output: KeyOutput | undefined): S | undefined;
  /** A canonical string of a state, for memoisation. */
  keyOf(state: S): string;
}

export type KeyVerdict =
  | { key: string; verdict: 'linearizable'; operations: number }
  | { key: string; verdict: 'unknown'; operations: number; reason: string }
  | { key: string; verdict: 'violation'; operations: number; history: HistoryOperation[]; longestPrefix: HistoryOperation[] };

export interface CheckResult {
  model: string;
  ok: boolean;
  keys: KeyVerdict[];
  violations: Extract<KeyVerdict, { verdict: 'violation' }>[];
  unknown: Extract<KeyVerdict, { verdict: 'unknown' }>[];
}

export interface CheckOptions {
  /** Search steps allowed per key before the verdict is 'unknown' (never a false violation). */
  maxSteps?: number;
  /** Shrink a violating history to a minimal one before reporting it. */
  minimise?: boolean;
}

// --- models -----------------------------------------------------------------------------------

/** An unversioned key: one body or nothing. The state is the body's value, or null. */
export const registerModel: Model<string | null> = {
  name: 'register',
  init: () => null,
  keyOf: (state) => (state === null ? '∅' : `=${state}`),
  step(state, input, output) {
    switch (input.op) {
      case 'put': {
        const holds = conditionHolds(input, state);
        return writeOutcome(output, holds, () => input.value, state);
      }
      case 'delete': {
        const holds = input.ifMatch === undefined || state === input.ifMatch;
        return writeOutcome(output, holds, () => null, state);
      }
      case 'get':
      case 'head':
        return readOutcome(output, state === null ? undefined : { value: state }) ? state : undefined;
      case 'getVersion':
      case 'deleteVersion':
        return undefined;
    }
  },
};

interface Version {
  /** undefined until known: a PUT whose answer never arrived. */
  id?: string;
  /** undefined for a delete marker. */
  value?: string;
}

/** A versioned key: its versions and delete markers, oldest first. */
export const versionedRegisterModel: Model<readonly Version[]> = {
  name: 'versioned register',
  init: () => [],
  keyOf: (state) => state.map((v) => `${v.id ?? '?'}:${v.value ?? '×'}`).join(','),
  step(state, input, output) {
    const latest = state.at(-1);
    const current = latest?.value;
    switch (input.op) {
      case 'put': {
        const holds = conditionHolds(input, current ?? null);
        return writeOutcome(output, holds, () => [...state, { id: idOf(output), value: input.value }], state);
      }
      case 'delete': {
        const holds = input.ifMatch === undefined || current === input.ifMatch;
        return writeOutcome(output, holds, () => [...state, { id: idOf(output) }], state);
      }
      case 'get':
      case 'head': {
        if (current === undefined) return readOutcome(output, undefined) ? state : undefined;
        return readOutcome(output, { value: current, versionId: latest?.id }) ? state : undefined;
      }
      case 'getVersion': {
        const found = state.find((v) => v.id === input.versionId);
        if (found !== undefined && found.value === undefined) {
          // GET of a delete marker by its id: 405 MethodNotAllowed, recorded as a refusal.
          return output === undefined || output.kind === 'noEffect' ? state : undefined;
        }
        return readOutcome(output, found === undefined ? undefined : { value: found.value, versionId: found.id }) ? state : undefined;
      }
      case 'deleteVersion': {
        if (output !== undefined && output.kind !== 'ok') return output.kind === 'noEffect' ? state : undefined;
        return state.filter((v) => v.id !== input.versionId);
      }
    }
  },
};

function conditionHolds(input: { ifNoneMatch?: '*'; ifMatch?: string }, current: string | null): boolean {
  if (input.ifNoneMatch === '*' && current !== null) return false;
  if (input.ifMatch !== undefined && current !== input.ifMatch) return false;
  return true;
}

function idOf(output: KeyOutput | undefined): string | undefined {
  return output?.kind === 'ok' ? output.versionId : undefined;
}

/**
 * A write at its linearization point: applied when its condition holds (an unknown outcome too),
 * refused with 412 (or 404 for an If-Match on a missing key) when it does not, and a `noEffect`
 * refusal changes nothing whatever the state.
 */
function writeOutcome<S>(output: KeyOutput | undefined, holds: boolean, apply: () => S, state: S): S | undefined {
  if (output === undefined) return holds ? apply() : state;
  switch (output.kind) {
    case 'ok':
      return holds ? apply() : undefined;
    case 'precondition':
    case 'absent':
      return holds ? undefined : state;
    case 'noEffect':
      return state;
  }
}

/** A read's answer against what the key holds (undefined: nothing). */
function readOutcome(output: KeyOutput | undefined, holds: { value?: string; versionId?: string } | undefined): boolean {
  if (output === undefined || output.kind === 'noEffect') return true;
  if (output.kind === 'absent') return holds === undefined;
  if (output.kind !== 'ok' || holds === undefined) return false;
  if (output.value !== undefined && output.value !== holds.value) return false;
  return output.versionId === undefined || holds.versionId === undefined || output.versionId === holds.versionId;
}

// --- the search -------------------------------------------------------------------------------

interface Entry {
  call: boolean;
  id: number;
  time: number;
  prev: Entry | undefined;
  next: Entry | undefined;
  /** The call's matching return (on call entries). */
  match?: Entry;
}

type SearchOutcome = { verdict: 'linearizable' } | { verdict: 'violation'; longest: number[] } | { verdict: 'unknown'; reason: string };

/** Wing–Gong search with memoisation over one key's operations. */
export function searchLinearization<S>(model: Model<S>, operations: readonly HistoryOperation[], maxSteps = 2_000_000): SearchOutcome {
  const head = buildEntries(operations);
  const seen = new Set<string>();
  const stack: { entry: Entry; state: S }[] = [];
  let placed = 0n;
  let state = model.init();
  let entry = head.next;
  let longest: number[] = [];
  let steps = 0;
  while (head.next !== undefined) {
    if (++steps > maxSteps) return { verdict: 'unknown', reason: `search gave up after ${maxSteps} steps on ${operations.length} operations` };
    if (entry === undefined) return { verdict: 'unknown', reason: 'internal: walked past the last entry' };
    if (entry.call) {
      const op = operations[entry.id]!;
      const next = model.step(state, op.input, op.output);
      if (next !== undefined) {
        const after = placed | (1n << BigInt(entry.id));
        const memo = `${after.toString(36)}|${model.keyOf(next)}`;
        if (!seen.has(memo)) {
          seen.add(memo);
          stack.push({ entry, state });
          state = next;
          placed = after;
          lift(entry);
          if (stack.length > longest.length) longest = stack.map((s) => s.entry.id);
          entry = head.next;
          continue;
        }
      }
      entry = entry.next;
    } else {
      const top = stack.pop();
      if (top === undefined) return { verdict: 'violation', longest };
      state = top.state;
      placed &= ~(1n << BigInt(top.entry.id));
      unlift(top.entry);
      entry = top.entry.next;
    }
  }
  return { verdict: 'linearizable' };
}

function buildEntries(operations: readonly HistoryOperation[]): Entry {
  const entries: Entry[] = [];
  operations.forEach((op, id) => {
    const call: Entry = { call: true, id, time: op.invokeMs, prev: undefined, next: undefined };
    const ret: Entry = { call: false, id, time: op.completeMs ?? Number.POSITIVE_INFINITY, prev: undefined, next: undefined };
    call.match = ret;
    entries.push(call, ret);
  });
  // Calls before returns at the same instant: operations that touch are treated as concurrent.
  entries.sort((a, b) => a.time - b.time || Number(b.call) - Number(a.call) || a.id - b.id);
  const head: Entry = { call: false, id: -1, time: Number.NEGATIVE_INFINITY, prev: undefined, next: undefined };
  let last = head;
  for (const e of entries) {
    last.next = e;
    e.prev = last;
    last = e;
  }
  return head;
}

function lift(call: Entry): void {
  for (const e of [call, call.match!]) {
    e.prev!.next = e.next;
    if (e.next !== undefined) e.next.prev = e.prev;
  }
}

function unlift(call: Entry): void {
  for (const e of [call.match!, call]) {
    e.prev!.next = e;
    if (e.next !== undefined) e.next.prev = e;
  }
}

// --- whole histories --------------------------------------------------------------------------

/** Checks every key of a history against one model. */
export function checkHistory<S>(model: Model<S>, history: readonly HistoryOperation[], options: CheckOptions = {}): CheckResult {
  const byKey = new Map<string, HistoryOperation[]>();
  for (const op of history) {
    const list = byKey.get(op.key) ?? [];
    list.push(op);
    byKey.set(op.key, list);
  }
  const keys: KeyVerdict[] = [];
  for (const [key, operations] of [...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const outcome = searchLinearization(model, operations, options.maxSteps);
    if (outcome.verdict === 'linearizable') keys.push({ key, verdict: 'linearizable', operations: operations.length });
    else if (outcome.verdict === 'unknown') keys.push({ key, verdict: 'unknown', operations: operations.length, reason: outcome.reason });
    else {
      const shown = options.minimise === false ? operations : minimiseViolation(model, operations, options.maxSteps);
      const again = searchLinearization(model, shown, options.maxSteps);
      const longest = again.verdict === 'violation' ? again.longest : outcome.longest;
      keys.push({ key, verdict: 'violation', operations: operations.length, history: shown, longestPrefix: longest.map((id) => shown[id]!) });
    }
  }
  const violations = keys.filter((k): k is Extract<KeyVerdict, { verdict: 'violation' }> => k.verdict === 'violation');
  const unknown = keys.filter((k): k is Extract<KeyVerdict, { verdict: 'unknown' }> => k.verdict === 'unknown');
  return { model: model.name, ok: violations.length === 0, keys, violations, unknown };
}

/**
 * Shrinks a non-linearizable history: drops each operation in turn and keeps the drop while what
 * is left is still a violation. Dropping an operation removes a constraint or an effect, so the
 * result is a small history that still shows the fault (one-minimal: removing any one more
 * operation makes it linearizable).
 */
export function minimiseViolation<S>(model: Model<S>, operations: readonly HistoryOperation[], maxSteps?: number): HistoryOperation[] {
  let current = [...operations];
  for (let i = current.length - 1; i >= 0; i -= 1) {
    const candidate = current.filter((_, j) => j !== i);
    if (searchLinearization(model, candidate, maxSteps).verdict === 'violation') current = candidate;
  }
  return current;
}

/** Listings that miss a key acknowledged before they began, or name a key never written before they ended. */
export interface ListingProblem {
  listing: ListingOperation;
  key: string;
  problem: 'missing acknowledged key' | 'phantom key';
}

export function checkListings(history: readonly HistoryOperation[], listings: readonly ListingOperation[]): ListingProblem[] {
  const problems: ListingProblem[] = [];
  const keys = new Set(history.map((op) => op.key));
  for (const listing of listings) {
    const named = new Set(listing.keys);
    for (const key of keys) {
      if (!key.startsWith(listing.prefix)) continue;
      const ops = history.filter((op) => op.key === key);
      const acknowledgedPutBefore = ops.some((op) => op.input.op === 'put' && op.output?.kind === 'ok' && op.completeMs !== undefined && op.completeMs < listing.invokeMs);
      const removalPossible = ops.some((op) => (op.input.op === 'delete' || op.input.op === 'deleteVersion') && op.invokeMs <= listing.completeMs && op.output?.kind !== 'noEffect' && op.output?.kind !== 'precondition');
      if (acknowledgedPutBefore && !removalPossible && !named.has(key)) problems.push({ listing, key, problem: 'missing acknowledged key' });
    }
    for (const key of named) {
      const writtenBefore = history.some((op) => op.key === key && op.input.op === 'put' && op.invokeMs <= listing.completeMs);
      if (!writtenBefore) problems.push({ listing, key, problem: 'phantom key' });
    }
  }
  return problems;
}

/** A readable account of a violation: the minimal history in time order, one operation a line. */
export function describeViolation(verdict: Extract<KeyVerdict, { verdict: 'violation' }>): string {
  const origin = Math.min(...verdict.history.map((op) => op.invokeMs));
  const line = (op: HistoryOperation): string => {
    const end = op.completeMs === undefined ? '…' : (op.completeMs - origin).toFixed(1);
    return `  client ${op.client} [${(op.invokeMs - origin).toFixed(1)}, ${end}] ms ${describeInput(op.input)} -> ${describeOutput(op.output)}`;
  };
  const sorted = [...verdict.history].sort((a, b) => a.invokeMs - b.invokeMs);
  return [
    `key ${JSON.stringify(verdict.key)}: not linearizable (${verdict.operations} operations, ${verdict.history.length} in the minimal history):`,
    ...sorted.map(line),
    `  longest order that fits: ${verdict.longestPrefix.map((op) => describeInput(op.input)).join(' ; ') || '(none)'}`,
  ].join('\n');
}

function describeInput(input: KeyInput): string {
  switch (input.op) {
    case 'put':
      return `PUT ${input.value}${input.ifNoneMatch ? ' If-None-Match:*' : ''}${input.ifMatch ? ` If-Match:${input.ifMatch}` : ''}`;
    case 'delete':
      return `DELETE${input.ifMatch ? ` If-Match:${input.ifMatch}` : ''}`;
    case 'getVersion':
      return `GET ?versionId=${input.versionId}`;
    case 'deleteVersion':
      return `DELETE ?versionId=${input.versionId}`;
    default:
      return input.op.toUpperCase();
  }
}

function describeOutput(output: KeyOutput | undefined): string {
  if (output === undefined) return 'unknown';
  switch (output.kind) {
    case 'ok':
      return `ok${output.value === undefined ? '' : ` ${output.value}`}${output.versionId === undefined ? '' : ` (version ${output.versionId})`}`;
    case 'absent':
      return '404';
    case 'precondition':
      return '412';
    case 'noEffect':
      return `refused ${output.name}`;
  }
}
