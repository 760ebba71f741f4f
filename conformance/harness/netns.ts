/**
 * Hosts on one machine for tests of what crosses a network: network namespaces this harness
 * makes itself (Linux `ip netns` and iptables, from Debian's iproute2 and iptables), joined by a bridge in a
 * namespace of their own, like machines on one switch. Each host has one interface (`eth0`) with
 * an address of 10.<subnet>.0.<n>/24 and its own loopback; nothing is added to the namespace the
 * harness runs in, and `destroy` removes every namespace it made (the processes in them first).
 *
 * Links between hosts are cut and slowed inside the hosts' own namespaces:
 * - `cut(from, to)` drops every packet `from` sends to `to` (iptables OUTPUT in `from`'s
 *   namespace). One direction cut breaks TCP both ways in practice (the handshake's answer is
 *   lost), but a connection's packets already sent the other way still arrive: that is the
 *   asymmetric case.
 * - `heal()` removes every cut.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** One host: its namespace and address. */
export interface NetHost {
  name: string;
  namespace: string;
  address: string;
}

/** What changes the links of hosts made by startNetLab (also from a process running inside one of them). */
export interface NetControl {
  hosts: NetHost[];
  /** The prefix that runs a command in a host's namespace: `ip netns exec <namespace>`. */
  execPrefix(host: NetHost): string[];
  cut(from: NetHost, to: NetHost): Promise<void>;
  /** Cuts every link between the two groups, both ways. */
  partition(side: NetHost[], other: NetHost[]): Promise<void>;
  heal(): Promise<void>;
}

export interface NetLab extends NetControl {
  destroy(): Promise<void>;
}

async function sh(args: string[]): Promise<string> {
  const { stdout } = await run(args[0]!, args.slice(1), { timeout: 10_000 });
  return stdout;
}

/** Why hosts cannot be made here (not root, no iproute2 or iptables, namespaces refused), or undefined when they can. */
export async function netLabUnavailable(): Promise<string | undefined> {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  const probe = `svcprobe${randomBytes(3).toString('hex')}`;
  try {
    await sh(['ip', 'netns', 'add', probe]);
  } catch (error) {
    return `cannot make a network namespace (ip netns add needs root and iproute2): ${(error as Error).message.split('\n')[0]}`;
  }
  try {
    await sh(['ip', 'netns', 'exec', probe, 'iptables', '-L', 'OUTPUT', '-n']);
  } catch (error) {
    return `iptables must run in a network namespace: ${(error as Error).message.split('\n')[0]}`;
  } finally {
    await sh(['ip', 'netns', 'del', probe]).catch(() => undefined);
  }
  return undefined;
}

/**
 * Makes `count` hosts on one bridge (host i at 10.<subnet>.0.<i + 1>, i from 0) and, with `client`,
 * one more at 10.<subnet>.0.100 for the program that drives them.
 */
export async function startNetLab(options: { count: number; client?: boolean }): Promise<NetLab> {
  const tag = randomBytes(3).toString('hex');
  const subnet = 16 + (randomBytes(1)[0]! % 200);
  const bridgeSpace = `svc${tag}sw`;
  const made: string[] = [];
  const hosts: NetHost[] = [];
  const addHost = async (name: string, index: number, octet: number): Promise<NetHost> => {
    const namespace = `svc${tag}${name}`;
    await sh(['ip', 'netns', 'add', namespace]);
    made.push(namespace);
    await sh(['ip', '-n', namespace, 'link', 'set', 'lo', 'up']);
    // Both ends are made directly in their namespaces, so nothing appears where the harness runs.
    await sh(['ip', 'link', 'add', 'eth0', 'netns', namespace, 'type', 'veth', 'peer', 'name', `port${index}`, 'netns', bridgeSpace]);
    await sh(['ip', '-n', namespace, 'addr', 'add', `10.${subnet}.0.${octet}/24`, 'dev', 'eth0']);
    await sh(['ip', '-n', namespace, 'link', 'set', 'eth0', 'up']);
    await sh(['ip', '-n', bridgeSpace, 'link', 'set', `port${index}`, 'master', 'br0']);
    await sh(['ip', '-n', bridgeSpace, 'link', 'set', `port${index}`, 'up']);
    return { name, namespace, address: `10.${subnet}.0.${octet}` };
  };
  const destroy = async (): Promise<void> => {
    for (const namespace of made.reverse()) {
      const pids = (await sh(['ip', 'netns', 'pids', namespace]).catch(() => '')).split(/\s+/).filter(Boolean);
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // gone already
        }
      }
      await sh(['ip', 'netns', 'del', namespace]).catch(() => undefined);
    }
  };
  try {
    await sh(['ip', 'netns', 'add', bridgeSpace]);
    made.push(bridgeSpace);
    await sh(['ip', '-n', bridgeSpace, 'link', 'add', 'br0', 'type', 'bridge']);
    await sh(['ip', '-n', bridgeSpace, 'link', 'set', 'br0', 'up']);
    for (let index = 0; index < options.count; index += 1) hosts.push(await addHost(`n${index + 1}`, index, index + 1));
    if (options.client) hosts.push(await addHost('client', options.count, 100));
  } catch (error) {
    await destroy();
    throw error;
  }
  return { ...netControl(hosts), destroy };
}


/** Cuts and heals the links of these hosts. */
export function netControl(hosts: NetHost[]): NetControl {
  const cuts = new Set<string>();
  const iptables = (host: NetHost, args: string[]) => sh(['ip', 'netns', 'exec', host.namespace, 'iptables', ...args]);
  const control: NetControl = {
    hosts,
    execPrefix: (host) => ['ip', 'netns', 'exec', host.namespace],
    async cut(from, to) {
      const name = `${from.namespace}>${to.address}`;
      if (cuts.has(name)) return;
      cuts.add(name);
      await iptables(from, ['-A', 'OUTPUT', '-d', to.address, '-j', 'DROP']);
    },
    async partition(side, other) {
      for (const a of side) {
        for (const b of other) {
          await control.cut(a, b);
          await control.cut(b, a);
        }
      }
    },
    async heal() {
      for (const host of hosts) {
        if ([...cuts].some((name) => name.startsWith(`${host.namespace}>`))) await iptables(host, ['-F', 'OUTPUT']);
      }
      cuts.clear();
    },
  };
  return control;
}
