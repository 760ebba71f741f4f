/** A small Copy button for a value shown beside it (a key, an ETag), announcing the copy to screen readers. */
import { useState } from 'preact/hooks';

export function CopyButton(props: { value: string; what: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    navigator.clipboard.writeText(props.value).then(
      () => setState('copied'),
      () => setState('failed'),
    );
  };
  return (
    <>
      <button class="button small copy" type="button" onClick={copy} aria-label={`Copy ${props.what}`}>
        {state === 'copied' ? 'Copied' : 'Copy'}
      </button>
      <span class="sr-only" role="status">
        {state === 'copied' ? `The ${props.what} is copied.` : state === 'failed' ? `The ${props.what} could not be copied.` : ''}
      </span>
    </>
  );
}
