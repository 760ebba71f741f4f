/**
 * What each kind of event target received, read back through the broker's own client: a webhook
 * receiver on loopback, NATS and MQTT subscriptions, an AMQP queue bound to the exchange, a Redis
 * list (access format) and a PostgreSQL table (access format). Each `messages()` answers the
 * envelopes (`{ EventName, Key, Records }`, or `{ Records }` from the tables) received so far, in
 * the order received.
 */
import { createServer, type Server } from 'node:http';
import { connect as connectNats } from 'nats';
import { Redis } from 'ioredis';
import { connectAsync as connectMqtt } from 'mqtt';
import { connect as connectAmqp } from 'amqplib';
import pg from 'pg';
import type { EventRecord } from '../../src/ops/events/records.js';

/** A record as received: AWS's shape, as the server writes it. */
export type ReceivedRecord = EventRecord;

export interface Consumer {
  records(): Promise<ReceivedRecord[]>;
  close(): Promise<void>;
}

export interface WebhookReceiver extends Consumer {
  url: string;
  authorizations: string[];
}

const recordsOf = (messages: { Records: ReceivedRecord[] }[]): ReceivedRecord[] => messages.flatMap((message) => message.Records);

export async function webhookReceiver(): Promise<WebhookReceiver> {
  const received: { Records: ReceivedRecord[] }[] = [];
  const authorizations: string[] = [];
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      authorizations.push(request.headers.authorization ?? '');
      received.push(JSON.parse(Buffer.concat(parts).toString('utf8')) as { Records: ReceivedRecord[] });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/events`,
    authorizations,
    records: async () => recordsOf(received),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function natsConsumer(address: string, subject: string): Promise<Consumer> {
  const connection = await connectNats({ servers: address });
  const received: { Records: ReceivedRecord[] }[] = [];
  connection.subscribe(subject, { callback: (_error, message) => received.push(JSON.parse(Buffer.from(message.data).toString('utf8')) as { Records: ReceivedRecord[] }) });
  await connection.flush();
  return { records: async () => recordsOf(received), close: () => connection.close() };
}

export async function mqttConsumer(broker: string, topic: string): Promise<Consumer> {
  const client = await connectMqtt(broker);
  const received: { Records: ReceivedRecord[] }[] = [];
  client.on('message', (_topic, payload) => received.push(JSON.parse(payload.toString('utf8')) as { Records: ReceivedRecord[] }));
  await client.subscribeAsync(topic, { qos: 1 });
  return { records: async () => recordsOf(received), close: async () => void (await client.endAsync()) };
}

export async function amqpConsumer(url: string, exchange: string, routingKey: string): Promise<Consumer> {
  const model = await connectAmqp(url);
  const channel = await model.createChannel();
  await channel.assertExchange(exchange, 'direct', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, exchange, routingKey);
  const received: { Records: ReceivedRecord[] }[] = [];
  await channel.consume(queue, (message) => {
    if (message) received.push(JSON.parse(message.content.toString('utf8')) as { Records: ReceivedRecord[] });
  }, { noAck: true });
  return { records: async () => recordsOf(received), close: () => model.close() };
}

/** A Redis list of the access format: each entry `[{ Event: [record], EventTime }]`. */
export function redisListConsumer(address: string, key: string): Consumer {
  const [host, port] = address.split(':');
  const client = new Redis({ host: host!, port: Number(port), maxRetriesPerRequest: 1, retryStrategy: () => 200 });
  client.on('error', () => undefined);
  return {
    records: async () => (await client.lrange(key, 0, -1)).flatMap((entry) => (JSON.parse(entry) as { Event: ReceivedRecord[] }[]).flatMap((item) => item.Event)),
    close: async () => void client.disconnect(),
  };
}

/** A Redis hash of the namespace format: `bucket/key` to `{ Records }`. */
export async function redisHash(address: string, key: string): Promise<Record<string, ReceivedRecord>> {
  const [host, port] = address.split(':');
  const client = new Redis({ host: host!, port: Number(port) });
  try {
    const entries = await client.hgetall(key);
    return Object.fromEntries(Object.entries(entries).map(([name, value]) => [name, (JSON.parse(value) as { Records: ReceivedRecord[] }).Records[0]!]));
  } finally {
    client.disconnect();
  }
}

/** Rows of a PostgreSQL table: access format (event_time, event_data) in insertion order, or namespace (key, value). */
export async function postgresRows(connectionString: string, table: string, format: 'access' | 'namespace'): Promise<{ key?: string; record: ReceivedRecord }[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const exists = await client.query('SELECT to_regclass($1) AS name', [table]);
    if ((exists.rows[0] as { name: string | null }).name === null) return [];
    if (format === 'access') {
      const result = await client.query(`SELECT event_data FROM "${table}" ORDER BY ctid`);
      return result.rows.map((row: { event_data: { Records: ReceivedRecord[] } }) => ({ record: row.event_data.Records[0]! }));
    }
    const result = await client.query(`SELECT key, value FROM "${table}" ORDER BY key`);
    return result.rows.map((row: { key: string; value: { Records: ReceivedRecord[] } }) => ({ key: row.key, record: row.value.Records[0]! }));
  } finally {
    await client.end();
  }
}

export function postgresConsumer(connectionString: string, table: string): Consumer {
  return { records: async () => (await postgresRows(connectionString, table, 'access')).map((row) => row.record), close: async () => undefined };
}

/** Polls until `done` holds for what `read` answers (no fixed sleeps), or fails after `timeoutMs`. */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined && done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms; last value: ${JSON.stringify(value)?.slice(0, 2_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
