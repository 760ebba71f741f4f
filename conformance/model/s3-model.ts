/**
 * The in-memory reference model of one S3 bucket that model-based runs compare a target with:
 * versions per key (newest last), delete markers, the versioning state, and what a listing with a
 * prefix, a delimiter and a page size must return. It knows S3's rules, not any store's.
 */
export type VersioningState = 'Unversioned' | 'Enabled' | 'Suspended';

export interface ModelVersion {
  /** The id the target assigned ('null' for unversioned and suspended writes). */
  versionId: string;
  /** undefined for a delete marker. */
  body?: Buffer;
}

export class BucketModel {
  versioning: VersioningState = 'Unversioned';
  readonly keys = new Map<string, ModelVersion[]>();

  /** The current body of a key, or undefined when absent or hidden by a delete marker. */
  current(key: string): Buffer | undefined {
    return this.keys.get(key)?.at(-1)?.body;
  }

  /** A write: a new version when versioning is enabled, else it replaces the null version. */
  write(key: string, versionId: string, body: Buffer | undefined): void {
    const versions = (this.keys.get(key) ?? []).filter((version) => this.versioning === 'Enabled' || version.versionId !== 'null');
    versions.push({ versionId: this.versioning === 'Enabled' ? versionId : 'null', body });
    this.keys.set(key, versions);
  }

  /** DELETE without a version id: a marker when versioned, removal otherwise. */
  deleteCurrent(key: string, markerVersionId: string): void {
    if (this.versioning === 'Unversioned') {
      this.keys.delete(key);
      return;
    }
    this.write(key, markerVersionId, undefined);
  }

  deleteVersion(key: string, versionId: string): void {
    const versions = (this.keys.get(key) ?? []).filter((version) => version.versionId !== versionId);
    if (versions.length === 0) this.keys.delete(key);
    else this.keys.set(key, versions);
  }

  /** The keys and common prefixes a complete listing must return, in UTF-8 byte order. */
  listing(prefix: string, delimiter: string): { keys: string[]; prefixes: string[] } {
    const live = [...this.keys.keys()].filter((key) => key.startsWith(prefix) && this.current(key) !== undefined);
    const keys = new Set<string>();
    const prefixes = new Set<string>();
    for (const key of live) {
      const at = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      if (at >= 0) prefixes.add(key.slice(0, at + delimiter.length));
      else keys.add(key);
    }
    return { keys: byteOrder([...keys]), prefixes: byteOrder([...prefixes]) };
  }

  /** Every version, newest first per key, keys in byte order: [key, versionId, isMarker]. */
  versionListing(): [string, string, boolean][] {
    return byteOrder([...this.keys.keys()]).flatMap((key) => [...this.keys.get(key)!].reverse().map((version): [string, string, boolean] => [key, version.versionId, version.body === undefined]));
  }
}

export function byteOrder(values: string[]): string[] {
  return values.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}
