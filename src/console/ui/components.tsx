/** Small shared pieces: polling, progress bars, notices, confirmation dialogs, state badges. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

/** Calls `load` now and every `intervalMs` while the page shows; keeps the last answer and error. */
export function usePoll<T>(load: () => Promise<T>, intervalMs: number, deps: unknown[] = []): { data: T | undefined; error: ApiError | Error | undefined; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | Error | undefined>(undefined);
  const [tick, setTick] = useState(0);
  const depsKey = useRef<string | undefined>(undefined);
  // Read when the next load is scheduled: a page may poll faster while something runs, without an extra load when it changes.
  const interval = useRef(intervalMs);
  interval.current = intervalMs;
  useEffect(() => {
    // Other parameters (another bucket, say): the last answer was for them, not for these.
    const key = JSON.stringify(deps);
    if (depsKey.current !== undefined && depsKey.current !== key) {
      setData(undefined);
      setError(undefined);
    }
    depsKey.current = key;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async (repeat = false) => {
      // A page in a hidden tab is not refreshed: it asks again once shown.
      if (repeat && document.hidden) {
        timer = setTimeout(() => void run(true), interval.current);
        return;
      }
      try {
        const answer = await load();
        if (!live) return;
        setData(answer);
        setError(undefined);
      } catch (caught) {
        if (live) setError(caught as Error);
      }
      if (live && interval.current > 0) timer = setTimeout(() => void run(true), interval.current);
    };
    void run();
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((value) => value + 1) };
}

export function ProgressBar(props: { value: number; label: string; tone?: 'ok' | 'warn' | 'bad' }) {
  const value = Math.max(0, Math.min(100, props.value));
  return (
    <div class={`bar ${props.tone ?? ''}`} role="progressbar" aria-label={props.label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(value)}>
      <div class="bar-fill" style={{ width: `${value}%` }} />
    </div>
  );
}

export function ErrorNotice(props: { error: unknown; onClose?: () => void }) {
  if (!props.error) return null;
  const error = props.error as ApiError;
  return (
    <div class="notice error" role="alert">
      {error.code ? <strong class="code">{error.code}</strong> : null}
      <span>{error.message}</span>
      {props.onClose ? (
        <button class="link" type="button" onClick={props.onClose} aria-label="Dismiss">
          ✕
        </button>
      ) : null}
    </div>
  );
}

const badgeTones: [RegExp, string][] = [
  [/^(online|ok|finished|completed?|healed|enabled|done|active|readable|writable|deletable|accepted|allowed)$/i, 'ok'],
  [/^(offline|failed|canceled|unrecoverable|error|rejected|disabled|denied|not (readable|writable|deletable))$/i, 'bad'],
  [/^(deleted|delete marker|latest|unversioned|suspended|queued|waiting|stopped|built-in|created|this session)$/i, 'neutral'],
];

export function Badge(props: { state: string }) {
  const tone = badgeTones.find(([pattern]) => pattern.test(props.state))?.[1] ?? 'warn';
  return <span class={`badge ${tone}`}>{props.state}</span>;
}

/** `scrollable`: its content may scroll sideways on a phone, so it takes the focus to be scrolled from the keyboard. */
export function Card(props: { title: string; children: ComponentChildren; actions?: ComponentChildren; class?: string; scrollable?: boolean }) {
  return (
    <section class={`card ${props.class ?? ''}`} aria-label={props.title} tabIndex={props.scrollable ? 0 : undefined}>
      <header class="card-head">
        <h2>{props.title}</h2>
        {props.actions ? <div class="card-actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </section>
  );
}

export function Stat(props: { label: string; value: ComponentChildren; hint?: ComponentChildren; tone?: 'warn' | 'bad' | undefined }) {
  return (
    <div class={`stat ${props.tone ?? ''}`} data-tone={props.tone ?? 'ok'}>
      <div class="stat-label">{props.label}</div>
      <div class="stat-value">{props.value}</div>
      {props.hint ? <div class="stat-hint">{props.hint}</div> : null}
    </div>
  );
}

/**
 * A modal dialog (the platform's <dialog>: focus is kept inside, Escape cancels). With
 * `typeToConfirm`, the confirm button stays disabled until that text is typed.
 */
export function ConfirmDialog(props: { title: string; children: ComponentChildren; confirmLabel: string; danger?: boolean; typeToConfirm?: string; busy?: boolean; disabled?: boolean; error?: unknown; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState('');
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const ready = (props.typeToConfirm === undefined || typed === props.typeToConfirm) && props.disabled !== true;
  return (
    <dialog ref={ref} class="dialog" onCancel={(event) => { event.preventDefault(); props.onCancel(); }} aria-labelledby="dialog-title">
      <form method="dialog" onSubmit={(event) => { event.preventDefault(); if (ready && !props.busy) props.onConfirm(); }}>
        <h2 id="dialog-title">{props.title}</h2>
        <div class="dialog-body">{props.children}</div>
        {props.typeToConfirm !== undefined ? (
          <label class="field">
            <span>
              Type <code>{props.typeToConfirm}</code> to confirm
            </span>
            <input value={typed} onInput={(event) => setTyped((event.target as HTMLInputElement).value)} autoFocus autocomplete="off" spellcheck={false} />
          </label>
        ) : null}
        <ErrorNotice error={props.error} />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={props.onCancel}>
            Cancel
          </button>
          <button type="submit" class={`button ${props.danger ? 'danger' : 'primary'}`} disabled={!ready || props.busy}>
            {props.busy ? 'Working…' : props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** The header cell of a table's row-actions column (named for screen readers only). */
export function ActionsHead() {
  return (
    <th class="actions-col">
      <span class="sr-only">Actions</span>
    </th>
  );
}

/** A row's actions cell with one small danger button, or empty when the button is not offered. */
export function RowAction(props: { offered: boolean; label: string; children: ComponentChildren; onClick: () => void; disabled?: boolean }) {
  return (
    <td class="actions-col">
      {props.offered ? (
        <button class="button small danger" type="button" disabled={props.disabled} aria-label={props.label} onClick={props.onClick}>
          {props.children}
        </button>
      ) : null}
    </td>
  );
}

/**
 * A button that may be refused before it is pressed: with a `reason` it is disabled and the
 * reason is shown beside it (and read with it by screen readers).
 */
export function GuardedButton(props: { id: string; children: ComponentChildren; onClick: () => void; reason?: string | undefined; class?: string; ariaLabel?: string; extraDisabled?: boolean }) {
  const blocked = props.reason !== undefined;
  return (
    <span class="guarded">
      <button id={props.id} class={`button ${props.class ?? ''}`} type="button" disabled={blocked || props.extraDisabled} aria-describedby={blocked ? `${props.id}-why` : undefined} aria-label={props.ariaLabel} onClick={props.onClick}>
        {props.children}
      </button>
      {blocked ? (
        <span id={`${props.id}-why`} class="reason">
          {props.reason}
        </span>
      ) : null}
    </span>
  );
}
