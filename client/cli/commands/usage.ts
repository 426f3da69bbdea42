// `kiln usage`: the billing period's GPU hours and cost so far.
import type { Command } from 'commander';
import { ok } from '../../sdk/client.ts';
import { EXAMPLES } from '../options.ts';
import { printData, printList } from '../output.ts';
import { session } from '../session.ts';

export function addUsageCommand(program: Command): void {
  program.command('usage')
    .description('This billing period\'s GPU hours and cost, per deployment, and your balance')
    .addHelpText('after', EXAMPLES(['kiln usage', 'kiln usage --json']))
    .action(async (_options: unknown, command: Command) => {
      const s = await session(command);
      const usage = (await ok(s.client.GET('/api/billing/usage'))).data;
      if (s.format !== 'table') return printData(s.format, usage);
      const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
      printList(s.format, usage.deployments, [
        { header: 'DEPLOYMENT', value: (d) => d.name }, { header: 'GPU', value: (d) => d.gpu }, { header: 'GPU HOURS', value: (d) => d.gpuHours.toFixed(2) },
        { header: 'COST', value: (d) => dollars(d.costCents) }, { header: 'REQUESTS', value: (d) => d.requests },
      ]);
      process.stdout.write(`Period ${usage.period.start} to ${usage.period.end}: ${dollars(usage.totalCents)} so far, about ${dollars(usage.projection.periodEndCents)} by its end. Balance ${dollars(usage.balanceCents)}.\n`);
    });
}
