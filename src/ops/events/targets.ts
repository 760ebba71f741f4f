/**
 * Delivery to each kind of target through its broker's maintained client: webhook (Node's HTTP
 * client over kept-alive connections, as many as the queue has deliveries in flight), NATS
 * (`nats`), Redis (`ioredis`), MQTT (`mqtt`), AMQP (`amqplib`), PostgreSQL (`pg`). A send resolves
 * once the broker took the event (an HTTP 2xx, a NATS flush, a Redis reply, an MQTT
 * acknowledgement at QoS 1 and 2, an AMQP publisher confirm, a committed row) and rejects
 * otherwise; a lost connection is made again at the next send. Redis and PostgreSQL keep MinIO's
 * two formats: `namespace` (one entry per object, set or removed) and `access` (every event appended).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
// Each broker's client is loaded when its first target connects: a server without such a target,
// and every CLI run, does not pay for loading five clients it never uses.
import type { NatsConnection } from 'nats';
import type { Redis } from 'ioredis';
import type { MqttClient } from 'mqtt';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import type { Client as PgClient } from 'pg';
import type { EventMessage } from './records.js';
import type { TargetConfig } from './target-config.js';
import { untilAborted } from './queue.js';
import { limits } from '../../util/limits.js';

export interface EventTarget {
  readonly config: TargetConfig;
  send(message: EventMessage, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export function createTarget(config: TargetConfig): EventTarget {
  switch (config.type) {
    case 'webhook': return new WebhookTarget(config);
    case 'nats': return new NatsTarget(config);
    case 'redis': return new RedisTarget(config);
    case 'mqtt': return new MqttTarget(config);
    case 'amqp': return new AmqpTarget(config);
    case 'postgres': return new PostgresTarget(config);
  }
}

/** Whether an event removes its object (namespace formats delete the entry). */
export function isRemoval(message: EventMessage): boolean {
  return message.EventName.startsWith('s3:ObjectRemoved:') || message.EventName.startsWith('s3:LifecycleExpiration:');
}

const messageBytes = (message: EventMessage): Buffer => Buffer.from(JSON.stringify(message));

class WebhookTarget implements EventTarget {
  private readonly endpoint: URL;
  private readonly agent: HttpAgent;

  constructor(readonly config: TargetConfig) {
    this.endpoint = new URL(config.settings.ENDPOINT!);
    const pool = { keepAlive: true, maxSockets: limits.eventDeliveriesInFlight };
    this.agent = this.endpoint.protocol === 'https:' ? new HttpsAgent(pool) : new HttpAgent(pool);
  }

  send(message: EventMessage, signal: AbortSignal): Promise<void> {
    const body = messageBytes(message);
    const token = this.config.settings.AUTH_TOKEN;
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': body.length };
    // A token with a space is sent as it is (a scheme of its own); a bare one as a bearer token.
    if (token !== undefined) headers.authorization = token.includes(' ') ? token : `Bearer ${token}`;
    return new Promise<void>((resolve, reject) => {
      const answered = (response: IncomingMessage): void => {
        const status = response.statusCode ?? 0;
        // The answer is read to its end, so that its connection serves the next event.
        response.resume();
        response.on('error', reject);
        response.on('end', () => (status >= 200 && status < 300 ? resolve() : reject(new Error(`the webhook answered HTTP ${status}`))));
      };
      const options = { method: 'POST', headers, agent: this.agent, signal };
      const request = this.endpoint.protocol === 'https:' ? httpsRequest(this.endpoint, options, answered) : httpRequest(this.endpoint, options, answered);
      request.on('error', reject);
      request.end(body);
    });
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}

/**
 * The one connection every delivery of a target uses: deliveries that start while it is being made
 * wait for it instead of each opening their own (up to eight run at once), and a connection that
 * failed or closed is made again by the next delivery.
 */
export class SharedConnection<T> {
  private current: T | undefined;
  private making: Promise<T> | undefined;

  constructor(
    private readonly make: () => Promise<T>,
    private readonly end: (connection: T) => Promise<unknown>,
    private readonly usable: (connection: T) => boolean = () => true,
  ) {}

  get(): Promise<T> {
    if (this.current !== undefined && this.usable(this.current)) return Promise.resolve(this.current);
    this.making ??= (async () => {
      await this.drop();
      return (this.current = await this.make());
    })().finally(() => (this.making = undefined));
    return this.making;
  }

  /** Forgets `connection` if it is the current one (its own error or close handler says it is gone). */
  forget(connection: T): void {
    if (this.current === connection) this.current = undefined;
  }

  async drop(): Promise<void> {
    const connection = this.current;
    this.current = undefined;
    if (connection !== undefined) await this.end(connection).catch(() => undefined);
  }
}

class NatsTarget implements EventTarget {
  private readonly connection = new SharedConnection<NatsConnection>(
    async () => {
      const { ADDRESS: servers, USERNAME: user, PASSWORD: pass, TOKEN: token } = this.config.settings;
      const { connect } = await import('nats');
      return connect({ servers, reconnect: false, timeout: 5_000, ...(user ? { user } : {}), ...(pass ? { pass } : {}), ...(token ? { token } : {}) });
    },
    (connection) => connection.close(),
    (connection) => !connection.isClosed(),
  );

  constructor(readonly config: TargetConfig) {}

  async send(message: EventMessage, signal: AbortSignal): Promise<void> {
    try {
      const connection = await untilAborted(this.connection.get(), signal);
      connection.publish(this.config.settings.SUBJECT!, messageBytes(message));
      await untilAborted(connection.flush(), signal);
    } catch (error) {
      await this.connection.drop();
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.connection.drop();
  }
}

class RedisTarget implements EventTarget {
  /** Made at the first send; the client reconnects by itself after that. */
  private client: Promise<Redis> | undefined;

  constructor(readonly config: TargetConfig) {}

  private async create(): Promise<Redis> {
    const { Redis } = await import('ioredis');
    const [host, port] = splitAddress(this.config.settings.ADDRESS!);
    const { PASSWORD: password, USER: username } = this.config.settings;
    const client = new Redis({
      host, port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0,
      retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
      ...(password ? { password } : {}), ...(username ? { username } : {}),
    });
    client.on('error', () => undefined); // each failed send reports it
    return client;
  }

  async send(message: EventMessage, signal: AbortSignal): Promise<void> {
    const client = await (this.client ??= this.create());
    if (client.status === 'wait') await untilAborted(client.connect(), signal);
    const key = this.config.settings.KEY!;
    if (this.config.settings.FORMAT === 'access') {
      await untilAborted(client.rpush(key, JSON.stringify([{ Event: message.Records, EventTime: message.Records[0].eventTime }])), signal);
    } else if (isRemoval(message)) {
      await untilAborted(client.hdel(key, message.Key), signal);
    } else {
      await untilAborted(client.hset(key, message.Key, JSON.stringify({ Records: message.Records })), signal);
    }
  }

  async close(): Promise<void> {
    (await this.client)?.disconnect();
  }
}

class MqttTarget implements EventTarget {
  private readonly client = new SharedConnection<MqttClient>(
    async () => {
      const { BROKER: broker, USERNAME: username, PASSWORD: password } = this.config.settings;
      const url = broker!.replace(/^tcp:/, 'mqtt:').replace(/^(ssl|tls):/, 'mqtts:');
      const { connectAsync } = await import('mqtt');
      const client = await connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5_000, ...(username ? { username } : {}), ...(password ? { password } : {}) }, false);
      client.on('error', () => undefined);
      return client;
    },
    (client) => client.endAsync(true),
    (client) => client.connected,
  );

  constructor(readonly config: TargetConfig) {}

  async send(message: EventMessage, signal: AbortSignal): Promise<void> {
    try {
      const client = await untilAborted(this.client.get(), signal);
      const qos = Number(this.config.settings.QOS ?? '0') as 0 | 1 | 2;
      await untilAborted(client.publishAsync(this.config.settings.TOPIC!, messageBytes(message), { qos }), signal);
    } catch (error) {
      await this.client.drop();
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.client.drop();
  }
}

interface AmqpLink {
  model: ChannelModel;
  channel: ConfirmChannel;
}

class AmqpTarget implements EventTarget {
  private readonly link: SharedConnection<AmqpLink> = new SharedConnection<AmqpLink>(
    async () => {
      const { connect } = await import('amqplib');
      const model = await connect(this.config.settings.URL!);
      const link = { model, channel: await model.createConfirmChannel() };
      const forget = (): void => this.link.forget(link);
      model.on('error', forget);
      model.on('close', forget);
      link.channel.on('error', forget);
      link.channel.on('close', forget);
      await link.channel.assertExchange(this.config.settings.EXCHANGE!, this.config.settings.EXCHANGE_TYPE ?? 'direct', { durable: true });
      return link;
    },
    (link) => link.model.close(),
  );

  constructor(readonly config: TargetConfig) {}

  async send(message: EventMessage, signal: AbortSignal): Promise<void> {
    try {
      const { channel } = await untilAborted(this.link.get(), signal);
      channel.publish(this.config.settings.EXCHANGE!, this.config.settings.ROUTING_KEY ?? '', messageBytes(message), { persistent: true, contentType: 'application/json' });
      await untilAborted(channel.waitForConfirms(), signal);
    } catch (error) {
      await this.link.drop();
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.link.drop();
  }
}

class PostgresTarget implements EventTarget {
  /** Rows go in in the order their deliveries started: they wait for the one connection. */
  private readonly client: SharedConnection<PgClient> = new SharedConnection<PgClient>(() => this.connect(), (client) => client.end());

  constructor(readonly config: TargetConfig) {}

  private get table(): string {
    return `"${this.config.settings.TABLE!}"`;
  }

  private async connect(): Promise<PgClient> {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: this.config.settings.CONNECTION_STRING!, connectionTimeoutMillis: 5_000 });
    client.on('error', () => this.client.forget(client));
    const columns = this.config.settings.FORMAT === 'access' ? 'event_time TIMESTAMP WITH TIME ZONE NOT NULL, event_data JSONB' : 'key VARCHAR PRIMARY KEY, value JSONB';
    try {
      await client.connect();
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.table} (${columns})`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  }

  async send(message: EventMessage, signal: AbortSignal): Promise<void> {
    try {
      const client = await untilAborted(this.client.get(), signal);
      await untilAborted(this.write(client, message), signal);
    } catch (error) {
      await this.client.drop();
      throw error;
    }
  }

  private async write(client: PgClient, message: EventMessage): Promise<void> {
    if (this.config.settings.FORMAT === 'access') {
      await client.query(`INSERT INTO ${this.table} (event_time, event_data) VALUES ($1, $2)`, [message.Records[0].eventTime, JSON.stringify({ Records: message.Records })]);
    } else if (isRemoval(message)) {
      await client.query(`DELETE FROM ${this.table} WHERE key = $1`, [message.Key]);
    } else {
      await client.query(`INSERT INTO ${this.table} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [message.Key, JSON.stringify({ Records: message.Records })]);
    }
  }

  async close(): Promise<void> {
    await this.client.drop();
  }
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at), Number(address.slice(at + 1))];
}
