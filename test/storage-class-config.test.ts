import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { effectiveEnv, readStorageClassEnv, validateStorageClass } from '../src/cluster/storage-class-config.js';
import { isSvcError } from '../src/errors/index.js';

/** The oracle, from the SPEC "Errors" paragraph and the default-parity table, written plainly. */
function oracleValid(standard: number | 'auto', rrs: number | 'auto', widths: number[]): boolean {
  const defaults = (n: number) => (n === 1 ? 0 : n <= 3 ? 1 : n <= 5 ? 2 : n <= 7 ? 3 : 4);
  const narrowest = Math.min(...widths);
  if (standard !== 'auto' && standard > Math.floor(narrowest / 2)) return false;
  if (rrs !== 'auto' && rrs > Math.floor(narrowest / 2)) return false;
  if (rrs !== 'auto' && narrowest === 1) return false;
  for (const n of widths) {
    const s = standard === 'auto' ? defaults(n) : standard;
    const r = rrs === 'auto' ? (n === 1 ? 0 : 1) : rrs;
    if (s > 0 && r > 0 && s < r) return false;
  }
  return true;
}

const setting = fc.oneof(fc.constant('auto' as const), fc.integer({ min: 0, max: 9 }));
const widths = fc.oneof(fc.constant<number[]>([1]), fc.array(fc.integer({ min: 2, max: 16 }), { minLength: 1, maxLength: 3 }));
const envValue = (value: number | 'auto'): string => (value === 'auto' ? '' : `EC:${value}`);

describe('storage-class validation', () => {
  it('accepts exactly the combinations the SPEC allows', () => {
    fc.assert(
      fc.property(setting, setting, widths, (standard, rrs, poolWidths) => {
        const settings = readStorageClassEnv({ SVC_STORAGE_CLASS_STANDARD: envValue(standard), SVC_STORAGE_CLASS_RRS: envValue(rrs) });
        let accepted = true;
        try {
          validateStorageClass(settings, poolWidths);
        } catch (error) {
          expect(isSvcError(error, 'InvalidConfiguration')).toBe(true);
          accepted = false;
        }
        expect(accepted).toBe(oracleValid(standard, rrs, poolWidths));
      }),
      { numRuns: 500 },
    );
  });

  it('resolves parities per pool, EC:0 anywhere, and warns only for automatic zero parity', () => {
    const mixed = validateStorageClass(readStorageClassEnv({}), [4, 16]);
    expect([mixed.standardParity(0), mixed.standardParity(1), mixed.rrsParity(0)]).toEqual([2, 4, 1]);
    expect(mixed.warnings).toEqual([]);
    const zero = validateStorageClass(readStorageClassEnv({ SVC_STORAGE_CLASS_STANDARD: 'EC:2', SVC_STORAGE_CLASS_RRS: 'EC:0' }), [8]);
    expect([zero.standardParity(0), zero.rrsParity(0)]).toEqual([2, 0]);
    expect(validateStorageClass(readStorageClassEnv({ SVC_STORAGE_CLASS_STANDARD: 'EC:0' }), [4]).warnings).toEqual([]);
    const single = validateStorageClass(readStorageClassEnv({}), [1]);
    expect([single.standardParity(0), single.rrsParity(0)]).toEqual([0, 0]);
    expect(single.warnings.join()).toContain('no redundancy');
  });

  it('an empty value restores the automatic policy over a persisted one; unset keeps the persisted one', () => {
    const persisted = { standard: { kind: 'explicit' as const, parity: 1 } };
    expect(validateStorageClass(readStorageClassEnv({}), [8], persisted).standardParity(0)).toBe(1);
    expect(validateStorageClass(readStorageClassEnv({ SVC_STORAGE_CLASS_STANDARD: '' }), [8], persisted).standardParity(0)).toBe(4);
  });

  it('names the variable in syntax errors and warns above a 128 KiB inline block', () => {
    for (const [name, value] of [['SVC_STORAGE_CLASS_STANDARD', 'EC2'], ['SVC_STORAGE_CLASS_RRS', 'EC:-1'], ['SVC_STORAGE_CLASS_INLINE_BLOCK', 'lots']]) {
      let thrown: unknown;
      try {
        readStorageClassEnv({ [name!]: value });
      } catch (error) {
        thrown = error;
      }
      expect(isSvcError(thrown, 'InvalidConfiguration') && thrown.message.includes(name!)).toBe(true);
    }
    const big = validateStorageClass(readStorageClassEnv({ SVC_STORAGE_CLASS_INLINE_BLOCK: '256KiB' }), [4]);
    expect(big.inlineBlockBytes).toBe(256 * 1024);
    expect(big.warnings.join()).toContain('above 128 KiB');
  });

  it('maps legacy spellings when the SVC_ name is unset and reports conflicts', () => {
    const { values, conflicts } = effectiveEnv({ MINIO_STORAGE_CLASS_STANDARD: 'EC:3', MINIO_VOLUMES: '/d{1...4}', SVC_VOLUMES: '/e{1...4}' });
    expect(values.SVC_STORAGE_CLASS_STANDARD).toBe('EC:3');
    expect(values.SVC_VOLUMES).toBe('/e{1...4}');
    expect(conflicts).toEqual(['SVC_VOLUMES="/e{1...4}" wins over MINIO_VOLUMES="/d{1...4}"']);
  });
});
