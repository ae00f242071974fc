import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a server (PostgreSQL, Redis) that can make its connections go
 * silent the way a dead network path or a frozen peer does: no reset, no close, bytes sent are
 * never answered. A server restart or a refused connection is loud, and clients handle those; a
 * silent connection is the case nothing notices unless it bounds its own waits.
 */
export interface SilenceProxy {
  port: number;
  /**
   * Every connection open now stops forwarding in both directions: what either side sends is read
   * and dropped, ends and resets included, and the proxy never closes it. Connections opened later
   * pass normally.
   */
  silenceOpen(): void;
  /**
   * Every connection, open or opened in the next `ms`, holds what either side sends (ends and
   * resets included) until `ms` have passed, then delivers it all in order and goes on normally.
   */
  silenceAll(ms: number): void;
  /** Connections through the proxy still open, and how many of them were silenced for good. */
  counts(): { open: number; silenced: number };
  /**
   * Bytes the proxy has read so far and dropped (on connections silenced for good), or held (by
   * `silenceAll`, delivered since or not): proof that bytes reached the proxy and were not passed on.
   */
  bytes(): { dropped: number; held: number };
  /** Ends every connection (both sides) and stops listening. */
  close(): Promise<void>;
}

/** What one side sent, to be passed on to the other: bytes, its end (FIN), or its reset. */
type Item = Buffer | 'end' | 'reset';

/** One direction of a connection: where its bytes go, and what waits for a silence to end. */
interface Leg {
  to: Socket;
  held: Item[];
}

interface Link {
  client: Socket;
  upstream: Socket;
  /** Client to server, then server to client. */
  legs: Leg[];
  /** Silenced for good: nothing passes either way, and the proxy never ends either socket. */
  silenced: boolean;
}

function deliver(leg: Leg, item: Item): void {
  if (leg.to.destroyed) return;
  if (item === 'reset') leg.to.destroy();
  else if (item === 'end') {
    if (!leg.to.writableEnded) leg.to.end();
  } else leg.to.write(item);
}

/**
 * Starts the proxy on 127.0.0.1 (a port the kernel picks) in front of 127.0.0.1:`targetPort`.
 */
export async function startSilenceProxy(targetPort: number): Promise<SilenceProxy> {
  const links = new Set<Link>();
  const bytes = { dropped: 0, held: 0 };
  const size = (item: Item) => (typeof item === 'string' ? 0 : item.length);
  let holding = false;
  let holdUntil = 0;
  let holdTimer: NodeJS.Timeout | null = null;

  // Both sockets half-open: a side's FIN is an item like any other, passed on (or held, or dropped)
  // by this proxy, never answered by Node on its own.
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ host: '127.0.0.1', port: targetPort, allowHalfOpen: true });
    const link: Link = { client, upstream, legs: [], silenced: false };
    links.add(link);
    const wire = (from: Socket, to: Socket): void => {
      const leg: Leg = { to, held: [] };
      link.legs.push(leg);
      let failed = false;
      const pass = (item: Item) => {
        if (link.silenced) bytes.dropped += size(item);
        else if (holding) {
          bytes.held += size(item);
          leg.held.push(item);
        } else deliver(leg, item);
      };
      from.setNoDelay(true);
      from.on('data', (chunk: Buffer) => pass(chunk));
      from.on('end', () => pass('end'));
      // An error always comes with a close: the close passes it on, as a reset.
      from.on('error', () => (failed = true));
      from.on('close', () => {
        // A side that closed after its own FIN has nothing more to say: the FIN was passed on already.
        if (failed || !from.readableEnded) pass('reset');
        if (client.destroyed && upstream.destroyed && link.legs.every((l) => l.held.length === 0)) links.delete(link);
      });
    };
    wire(client, upstream);
    wire(upstream, client);
  });

  /** Delivers everything held, in order, and lets bytes pass again; synchronous, so nothing overtakes it. */
  const release = () => {
    holdTimer = null;
    holding = false;
    for (const link of [...links]) {
      for (const leg of link.legs) for (const item of leg.held.splice(0)) deliver(leg, item);
      if (link.client.destroyed && link.upstream.destroyed) links.delete(link);
    }
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    silenceOpen() {
      for (const link of links) {
        link.silenced = true;
        // Whatever it had held is dropped with it.
        for (const leg of link.legs) bytes.dropped += leg.held.splice(0).reduce((n, item) => n + size(item), 0);
      }
    },
    silenceAll(ms) {
      if (!(Number.isInteger(ms) && ms > 0)) throw new RangeError(`silenceAll: a whole number of ms > 0, not ${ms}`);
      // A second silence while one holds ends at the later of the two ends, never sooner.
      holdUntil = Math.max(holding ? holdUntil : 0, Date.now() + ms);
      holding = true;
      if (holdTimer !== null) clearTimeout(holdTimer);
      holdTimer = setTimeout(release, holdUntil - Date.now());
    },
    bytes: () => ({ ...bytes }),
    counts() {
      const open = [...links].filter((l) => !l.client.destroyed || !l.upstream.destroyed);
      return { open: open.length, silenced: open.filter((l) => l.silenced).length };
    },
    close() {
      if (holdTimer !== null) clearTimeout(holdTimer);
      holdTimer = null;
      holding = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const link of links) {
        link.client.destroy();
        link.upstream.destroy();
      }
      links.clear();
      return closed;
    },
  };
}
