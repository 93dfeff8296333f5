/**
 * Reads a password for the CLI: typed at a prompt without echo when stdin is a terminal, otherwise the first line of
 * stdin (so scripts can pipe it: `printf '%s\n' "$PASSWORD" | switchboard users create …`). Never from an argument,
 * which would land in shell history and the process list.
 */

async function readFirstLineOfStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    if (chunks.some((part) => part.includes(10))) break;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const newline = text.indexOf('\n');
  return (newline === -1 ? text : text.slice(0, newline)).replace(/\r$/, '');
}

function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const input = process.stdin;
    process.stderr.write(prompt);
    let value = '';
    input.setRawMode(true);
    input.resume();
    const finish = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.removeListener('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (data: Buffer) => {
      for (const character of data.toString('utf8')) {
        if (character === '\r' || character === '\n') return finish();
        if (character === '\u0003') return finish(new Error('cancelled'));
        if (character === '\u007f' || character === '\b') value = value.slice(0, -1);
        else if (character >= ' ') value += character;
      }
    };
    input.on('data', onData);
  });
}

/** Prompts twice on a terminal (a typo in a password nobody can see would lock its owner out). */
export async function readNewPassword(): Promise<string> {
  if (!process.stdin.isTTY) return readFirstLineOfStdin();
  const first = await promptHidden('Password (at least 10 characters): ');
  const second = await promptHidden('Repeat the password: ');
  if (first !== second) throw new Error('the two passwords are not the same');
  return first;
}
