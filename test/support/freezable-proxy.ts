// A TCP proxy in front of a server that can be frozen, as a server paused with SIGSTOP behaves: connections are
// still accepted, but nothing is forwarded either way, and nothing is refused or closed. Thawed, what was held
// flows on. Lets a test take a dependency away from one process without touching the others that share it.
import net from 'node:net';

export interface FreezableProxy {
  readonly port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function freezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  const pairs = new Set<readonly [net.Socket, net.Socket]>();
  let frozen = false;
  const flow = ([client, upstream]: readonly [net.Socket, net.Socket]) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const hold = ([client, upstream]: readonly [net.Socket, net.Socket]) => {
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.pause();
  };
  const server = net.createServer((client) => {
    const pair = [client, net.connect(target.port, target.host)] as const;
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      for (const socket of pair) socket.destroy();
    };
    for (const socket of pair) socket.on('error', end).on('close', end);
    if (frozen) hold(pair);
    else flow(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze() {
      frozen = true;
      for (const pair of pairs) hold(pair);
    },
    thaw() {
      frozen = false;
      for (const pair of pairs) flow(pair);
    },
    async close() {
      for (const pair of pairs) for (const socket of pair) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
