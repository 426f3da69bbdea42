// `kiln chat`: a deployment's model answering, streamed as it writes.
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { serverSentEvents } from '../../sdk/client.ts';
import { interactive } from '../input.ts';
import { EXAMPLES, integer } from '../options.ts';
import { note, paint } from '../output.ts';
import { session } from '../session.ts';

export function addChatCommand(program: Command): void {
  program.command('chat').argument('<deployment>', 'id or name')
    .description('Talk to a deployment\'s model: the answer streams in as it is written. Without -m, a conversation (an empty line or Ctrl-D ends it)')
    .option('-m, --message <text>', 'one message, one answer, then exit')
    .option('--system <text>', 'a system prompt')
    .option('--max-tokens <n>', 'the longest answer, tokens', integer(1), 512)
    .addHelpText('after', EXAMPLES(['kiln chat chat', 'kiln chat chat -m "Write a haiku about kilns"']))
    .action(async (ref: string, o: { message?: string; system?: string; maxTokens: number }, command: Command) => {
      const s = await session(command);
      const id = await s.deploymentId(ref);
      const messages: { role: 'system' | 'user' | 'assistant'; content: string }[] = o.system ? [{ role: 'system', content: o.system }] : [];
      const turn = async (text: string) => {
        messages.push({ role: 'user', content: text });
        const { data: stream } = await s.client.POST('/v1/inference', { body: { deployment: id, messages, stream: true, max_tokens: o.maxTokens }, parseAs: 'stream', headers: { accept: 'text/event-stream' } });
        let answer = '';
        for await (const event of serverSentEvents(stream!)) {
          if (event.data === '[DONE]') break;
          const chunk = JSON.parse(event.data) as { choices?: { delta?: { content?: string } }[] };
          const token = chunk.choices?.[0]?.delta?.content ?? '';
          answer += token;
          process.stdout.write(token);
        }
        process.stdout.write('\n');
        messages.push({ role: 'assistant', content: answer });
      };
      if (o.message !== undefined) return turn(o.message);
      const prompt = interactive() ? paint('cyan', 'you> ') : '';
      if (interactive()) note(paint('dim', `Chatting with ${ref}. An empty line or Ctrl-D ends it.`, process.stderr));
      const lines = createInterface({ input: process.stdin, output: process.stdout, terminal: interactive() });
      try {
        lines.setPrompt(prompt);
        lines.prompt();
        for await (const line of lines) {
          if (!line.trim()) break;
          await turn(line);
          lines.prompt();
        }
      } finally {
        lines.close();
      }
    });
}
