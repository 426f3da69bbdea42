// Ending a node-postgres client whose server went away underneath it (a dropped database, a killed or paused
// server) can wait forever: its end() resolves on an 'end' event that already fired or never comes. Kiln's own
// long-lived clients (the live-updates LISTEN connection, the health probe's) are ended through this instead, and a
// probe that hangs drops its connection without a goodbye.
import type pg from 'pg';

/** Ends `client` politely, or drops its connection if that has not finished within `ms`. Never rejects. */
export async function endClient(client: pg.Client, ms = 1_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), ms); });
  const ended = await Promise.race([client.end().then(() => 'ended' as const, () => 'ended' as const), late]);
  clearTimeout(timer);
  if (ended === 'late') dropConnection(client);
}

/** Closes the client's socket at once, sending nothing: for a server that stopped answering, which would wait forever. */
export function dropConnection(client: pg.Client): void {
  (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
}
