/** Every version of every key in a bucket as sorted lines (key, version id, ETag and size, or "marker"). */
import { ListObjectVersionsCommand, type S3Client } from '@aws-sdk/client-s3';

export async function versionsOf(s3: S3Client, bucket: string): Promise<string[]> {
  const lines: string[] = [];
  let keyMarker: string | undefined;
  let versionMarker: string | undefined;
  for (;;) {
    const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, KeyMarker: keyMarker, VersionIdMarker: versionMarker }));
    for (const version of page.Versions ?? []) lines.push(`${version.Key} ${version.VersionId} ${version.ETag} ${version.Size}`);
    for (const marker of page.DeleteMarkers ?? []) lines.push(`${marker.Key} ${marker.VersionId} marker`);
    if (!page.IsTruncated) return lines.sort();
    keyMarker = page.NextKeyMarker;
    versionMarker = page.NextVersionIdMarker;
  }
}
