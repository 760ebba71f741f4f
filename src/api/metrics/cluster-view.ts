/**
 * The cluster view: every node's own exposition merged into one, as an operator scrapes one
 * endpoint. Each sample gets a `server` label naming the node it came from (so the same family from
 * two nodes stays two series), each family keeps one HELP and TYPE line, and `svc_node_up` says
 * which nodes answered.
 */
import { metricsPrefix } from './families.js';

export interface NodeExposition {
  server: string;
  /** The node's text exposition, or undefined when it did not answer. */
  text: string | undefined;
}

interface Family {
  header: string[];
  samples: string[];
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{)?(.*)$/;

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** `name{a="b"} 1` becomes `name{server="x",a="b"} 1`. */
export function withServerLabel(line: string, server: string): string {
  const match = sampleLine.exec(line);
  if (!match) return line;
  const label = `server="${escapeLabelValue(server)}"`;
  if (match[2] === '{') return `${match[1]}{${label}${match[3]!.startsWith('}') ? '' : ','}${match[3]}`;
  return `${match[1]}{${label}}${match[3]}`;
}

export function mergeExpositions(nodes: NodeExposition[]): string {
  const families = new Map<string, Family>();
  for (const node of nodes) {
    if (node.text === undefined) continue;
    let current: Family | undefined;
    for (const line of node.text.split('\n')) {
      if (line === '') continue;
      const header = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (header) {
        const name = header[2]!;
        const known = families.get(name);
        current = known ?? { header: [], samples: [] };
        if (!known) families.set(name, current);
        if (current.header.length < 2 && !current.header.some((existing) => existing.startsWith(`# ${header[1]} `))) current.header.push(line);
        continue;
      }
      if (line.startsWith('#') || !current) continue;
      current.samples.push(withServerLabel(line, node.server));
    }
  }
  const up: Family = {
    header: [`# HELP ${metricsPrefix}node_up 1 when the node answered for its metrics in this cluster view, 0 when it did not.`, `# TYPE ${metricsPrefix}node_up gauge`],
    samples: nodes.map((node) => `${metricsPrefix}node_up{server="${escapeLabelValue(node.server)}"} ${node.text === undefined ? 0 : 1}`),
  };
  return [...families.values(), up].map((family) => [...family.header, ...family.samples].join('\n')).join('\n') + '\n';
}
