/**
 * The object page's preview of the latest version: an image, the start of a text, an audio or a
 * video player, a PDF in a frame (the browser's own viewer), from the console's preview route
 * (sandboxed, inline, at most 16 MiB; a PDF framed by the console's origin only); other types,
 * larger or encrypted versions say why and leave the download to the version list. Text is
 * fetched and shown as text, never as a page.
 */
import { useEffect, useState } from 'preact/hooks';
import { apiUrl, errorOf } from './api';
import { bytes } from './format';
import type { ObjectVersion } from './page-object';
import { previewKind, previewMaxBytes } from '../../contracts/preview';

const textShownBytes = 64 * 1024;

function TextPreview(props: { url: string }) {
  const [text, setText] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    let live = true;
    fetch(props.url, { credentials: 'same-origin' })
      .then(async (response) => {
        if (!response.ok) throw await errorOf(response);
        const body = await response.text();
        if (live) setText(body.length > textShownBytes ? `${body.slice(0, textShownBytes)}\n…` : body);
      })
      .catch((caught: Error) => live && setError(caught.message));
    return () => {
      live = false;
    };
  }, [props.url]);
  if (error) return <p class="muted small">{error}</p>;
  if (text === undefined) return <p class="muted small">Loading…</p>;
  return (
    <pre class="preview-text" tabIndex={0} role="region" aria-label="Text preview">
      {text}
    </pre>
  );
}

export function Preview(props: { bucket: string; objectKey: string; version: ObjectVersion }) {
  const { version } = props;
  const kind = previewKind(version.contentType);
  const name = props.objectKey.split('/').filter(Boolean).at(-1) ?? props.objectKey;
  let why: string | undefined;
  if (!kind) why = `${version.contentType ?? 'This type'} is not previewed.`;
  else if (version.encryption) why = 'Encrypted versions are not previewed.';
  else if (version.sizeBytes > previewMaxBytes) why = `Previews show up to ${bytes(previewMaxBytes)}; this version is ${bytes(version.sizeBytes)}.`;
  const url = apiUrl(`buckets/${encodeURIComponent(props.bucket)}/preview`, { key: props.objectKey, versionId: version.versionId === 'null' ? undefined : version.versionId });
  return (
    <section class="preview" aria-label="Preview" data-testid="object-preview">
      <h3>Preview</h3>
      {why ? <p class="muted small">{why} Download it from the versions below.</p> : null}
      {!why && kind === 'image' ? <img class="preview-media" src={url} alt={`Preview of ${name}`} /> : null}
      {!why && kind === 'text' ? <TextPreview url={url} /> : null}
      {!why && kind === 'audio' ? <audio class="preview-media" src={url} controls preload="metadata" aria-label={`Play ${name}`} /> : null}
      {!why && kind === 'video' ? <video class="preview-media" src={url} controls preload="metadata" aria-label={`Play ${name}`} /> : null}
      {!why && kind === 'pdf' ? <iframe class="preview-pdf" src={url} title={`Preview of ${name}`} /> : null}
    </section>
  );
}
