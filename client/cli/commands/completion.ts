// `kiln completion <shell>`: a completion script drawn from the command tree itself, so a new command or
// flag completes without anyone editing a script.
import type { Command } from 'commander';
import { usage } from '../errors.ts';
import { EXAMPLES } from '../options.ts';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

const flagsOf = (command: Command) => command.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
const visible = (command: Command) => command.commands.filter((c) => c.name() !== 'help');

function completionScript(program: Command, shell: Shell): string {
  const globals = flagsOf(program);
  const top = visible(program);
  if (shell === 'fish') {
    const lines = ['# kiln completion for fish', 'complete -c kiln -f'];
    for (const c of top) lines.push(`complete -c kiln -n '__fish_use_subcommand' -a ${c.name()} -d '${c.description().split(/[:(]/)[0]!.replace(/'/g, '').trim()}'`);
    for (const c of top) {
      for (const sub of visible(c)) lines.push(`complete -c kiln -n '__fish_seen_subcommand_from ${c.name()}' -a ${sub.name()}`);
      for (const o of c.options) if (o.long) lines.push(`complete -c kiln -n '__fish_seen_subcommand_from ${c.name()}' -l ${o.long.slice(2)}`);
    }
    for (const o of program.options) if (o.long) lines.push(`complete -c kiln -l ${o.long.slice(2)}`);
    return lines.join('\n') + '\n';
  }
  const cases = top.map((c) => `    ${c.name()}) words="${[...visible(c).map((s) => s.name()), ...flagsOf(c), ...globals].join(' ')}" ;;`).join('\n');
  const bash = `_kiln() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmd="" i words
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in -*) ;; *) cmd="\${COMP_WORDS[i]}"; break ;; esac
  done
  case "$cmd" in
    "") words="${[...top.map((c) => c.name()), ...globals].join(' ')}" ;;
${cases}
    *) words="${globals.join(' ')}" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
`;
  if (shell === 'zsh') return `#compdef kiln\n# kiln completion for zsh\nautoload -U +X bashcompinit && bashcompinit\n${bash}complete -F _kiln kiln\n`;
  return `# kiln completion for bash: source <(kiln completion bash)\n${bash}complete -F _kiln kiln\n`;
}

export function addCompletionCommand(program: Command): void {
  program.command('completion').argument('[shell]', `one of ${SHELLS.join(', ')}`, 'bash')
    .description('Print a shell completion script')
    .addHelpText('after', EXAMPLES(['source <(kiln completion bash)', 'kiln completion zsh > "${fpath[1]}/_kiln"', 'kiln completion fish > ~/.config/fish/completions/kiln.fish']))
    .action((shell: string) => {
      if (!(SHELLS as readonly string[]).includes(shell)) throw usage(`No completion for ${shell}`, `Choose one of ${SHELLS.join(', ')}.`);
      process.stdout.write(completionScript(program, shell as Shell));
    });
}
