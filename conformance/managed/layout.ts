/**
 * Layout rejection (SPEC "Launch and layout rules", "Startup configuration", "Errors"): drawn
 * invalid launches (each breaking one named rule, among valid pools at drawn positions) must stop
 * with a non-zero exit, the error code and the rule's name in the output, and nothing created in
 * the directory the drives would live in: storage-class validation and the layout come before
 * any disk is touched.
 */
import fc from 'fast-check';
import { CheckFailure } from '../runner/check.js';
import type { PropertySuite } from './property.js';

export interface LayoutCase {
  rule: string;
  code: 'InvalidLayout' | 'InvalidConfiguration';
  /** Launch arguments, `<root>` standing for the (empty) directory the server is given. */
  args: string[];
  env: Record<string, string>;
}

/** Drive counts no width from 2 to 16 divides. */
const undividable = [17, 19, 23, 29, 31, 37, 41, 43, 47];
const validPool = (index: number) => fc.integer({ min: 2, max: 16 }).map((count) => `<root>/p${index}/d{1...${count}}`);

/** Good pools with one bad argument inserted at a drawn position. */
const poolsAround = (bad: fc.Arbitrary<string>, minGood: number) =>
  fc.tuple(fc.array(fc.nat(), { minLength: minGood, maxLength: 2 }), bad, fc.nat()).chain(([good, badArg, at]) =>
    fc.tuple(...good.map((_, index) => validPool(index))).map((pools) => {
      const args = [...pools];
      args.splice(at % (args.length + 1), 0, badArg);
      return args;
    }),
  );

const rules: fc.Arbitrary<LayoutCase>[] = [
  fc.integer({ min: 1, max: 9 }).map((drive) => ({ rule: 'min-two-drives', code: 'InvalidLayout' as const, args: [`<root>/a{${drive}...${drive}}`], env: {} })),
  poolsAround(fc.constant('<root>/plain'), 1).map((args) => ({ rule: 'multi-pool-needs-ellipsis', code: 'InvalidLayout' as const, args, env: {} })),
  poolsAround(fc.integer({ min: 1, max: 9 }).map((drive) => `<root>/one/d{${drive}...${drive}}`), 1).map((args) => ({ rule: 'single-drive-in-multi-pool', code: 'InvalidLayout' as const, args, env: {} })),
  poolsAround(fc.constantFrom(...undividable).map((count) => `<root>/odd/d{1...${count}}`), 0).map((args) => ({ rule: 'no-valid-set-width', code: 'InvalidLayout' as const, args, env: {} })),
  fc
    .tuple(fc.integer({ min: 2, max: 32 }), fc.integer({ min: 0, max: 40 }))
    .filter(([count, width]) => width < 2 || width > 16 || count % width !== 0)
    .map(([count, width]) => ({ rule: 'set-drive-count-invalid', code: 'InvalidLayout' as const, args: [`<root>/d{1...${count}}`], env: { SVC_ERASURE_SET_DRIVE_COUNT: String(width) } })),
  fc.tuple(fc.integer({ min: 2, max: 8 }), fc.integer({ min: 0, max: 6 })).map(([count, shift]) => ({
    rule: 'duplicate-endpoint',
    code: 'InvalidLayout' as const,
    args: [`<root>/x{1...${count}}`, `<root>/x{${1 + Math.min(shift, count - 1)}...${count + Math.min(shift, count - 1)}}`],
    env: {},
  })),
  fc.constant({ rule: 'single-drive-needs-local-path', code: 'InvalidLayout' as const, args: ['http://127.0.0.1:9<root>/remote'], env: {} }),
  fc.constantFrom('{3...1}', '{1..3}', '{a...3}', '{1...3', '{...3}', '{aa...bb}').map((range) => ({ rule: 'ellipsis-syntax', code: 'InvalidLayout' as const, args: [`<root>/d${range}`], env: {} })),
  fc
    .tuple(fc.integer({ min: 2, max: 16 }), fc.constantFrom('SVC_STORAGE_CLASS_STANDARD', 'SVC_STORAGE_CLASS_RRS'), fc.integer({ min: 1, max: 90 }))
    .map(([count, name, over]) => ({ rule: 'parity-at-most-half', code: 'InvalidConfiguration' as const, args: [`<root>/d{1...${count}}`], env: { [name]: `EC:${Math.min(Math.floor(count / 2) + over, 99)}` } })),
  fc
    .integer({ min: 4, max: 16 })
    .chain((count) => fc.tuple(fc.constant(count), fc.integer({ min: 1, max: Math.floor(count / 2) - 1 })))
    .chain(([count, standard]) => fc.tuple(fc.constant(count), fc.constant(standard), fc.integer({ min: standard + 1, max: Math.floor(count / 2) })))
    .map(([count, standard, rrs]) => ({ rule: 'standard-at-least-rrs', code: 'InvalidConfiguration' as const, args: [`<root>/d{1...${count}}`], env: { SVC_STORAGE_CLASS_STANDARD: `EC:${standard}`, SVC_STORAGE_CLASS_RRS: `EC:${rrs}` } })),
  fc
    .tuple(fc.constantFrom('SVC_STORAGE_CLASS_STANDARD', 'SVC_STORAGE_CLASS_RRS'), fc.constantFrom('EC2', 'EC:one', 'ec:2', 'EC:-1', 'EC:100', 'RS:2', '2'))
    .map(([name, value]) => ({ rule: 'storage-class-syntax', code: 'InvalidConfiguration' as const, args: ['<root>/d{1...4}'], env: { [name]: value } })),
  fc.constantFrom('lots', '-5', '0', '12 parsecs').map((value) => ({ rule: 'inline-block-syntax', code: 'InvalidConfiguration' as const, args: ['<root>/d{1...4}'], env: { SVC_STORAGE_CLASS_INLINE_BLOCK: value } })),
  fc.constant(0).map((parity) => ({ rule: 'rrs-on-single-drive', code: 'InvalidConfiguration' as const, args: ['<root>/single'], env: { SVC_STORAGE_CLASS_RRS: `EC:${parity}` } })),
];

export const layoutCases: fc.Arbitrary<LayoutCase> = fc.oneof(...rules);

export const layoutSuite: PropertySuite<LayoutCase> = {
  id: 'managed.layout-rejection',
  spec: 'Launch and layout rules',
  title: 'random invalid launches (layouts, set widths, storage classes) are refused at startup with the rule named, and no disk is touched',
  defaultRuns: 8,
  cases: layoutCases,
  describe: (drawn) => `${drawn.rule}: svc server ${drawn.args.join(' ')}${Object.entries(drawn.env).map(([key, value]) => ` ${key}=${value}`).join('')}`,
  async run(drawn, launcher) {
    const refusal = await launcher.refused((root) => drawn.args.map((arg) => arg.replaceAll('<root>', root)), drawn.env);
    if (refusal.code === 'timeout') throw new CheckFailure('the server kept running');
    if (refusal.code === 0) throw new CheckFailure('the server exited 0');
    if (!refusal.output.includes(`${drawn.code}: `)) throw new CheckFailure(`no ${drawn.code} in the output: ${refusal.output.slice(-400)}`);
    if (!refusal.output.includes(`[rule: ${drawn.rule}]`)) throw new CheckFailure(`the output does not name the rule ${drawn.rule}: ${refusal.output.slice(-400)}`);
    if (!refusal.untouched) throw new CheckFailure('the refused launch created files in its drive directory');
  },
};
