// What a command reads from the person or program running it: a terminal to ask on, or stdin.

/** A person at a terminal who can be asked (and shown a prompt). */
export const interactive = () => Boolean(process.stdin.isTTY && process.stdout.isTTY);

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
