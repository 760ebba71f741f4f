/**
 * Which stored media types the console previews, and how: shared by the preview route (which
 * refuses the others) and the object page (which does not ask for them). Imports nothing.
 * SVG is left out: it is a document that may carry script.
 */
export type PreviewKind = 'image' | 'text' | 'audio' | 'video' | 'pdf';

export function previewKind(contentType: string | null | undefined): PreviewKind | undefined {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (/^image\/(png|jpeg|gif|webp|avif|bmp)$/.test(type)) return 'image';
  if (/^text\/[a-z0-9.+-]+$/.test(type) || /^application\/(json|xml|x-ndjson|yaml|x-yaml)$/.test(type)) return 'text';
  if (/^audio\/(mpeg|mp4|ogg|wav|webm|flac|aac)$/.test(type)) return 'audio';
  if (/^video\/(mp4|webm|ogg)$/.test(type)) return 'video';
  // Shown by the browser's own viewer in a frame of the console's page, under the sandbox policy.
  if (type === 'application/pdf') return 'pdf';
  return undefined;
}

/** The largest version previewed (16 MiB). */
export const previewMaxBytes = 16 * 1024 * 1024;
